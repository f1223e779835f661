import { unwrap } from './errors.js';
import type { Client, FetchOptions } from 'openapi-fetch';
import type { paths } from './generated/schema.js';

/** The list operations that take a `cursor` (their meta carries next_cursor). */
export type CursorPath = {
  [P in keyof paths]: paths[P] extends { get: { parameters: { query?: { cursor?: string } } } } ? P : never;
}[keyof paths];

type ListOperation<P extends CursorPath> = paths[P]['get'];
type JsonSuccess<Operation> = Operation extends { responses: { 200: { content: { 'application/json': infer Body } } } }
  ? Body
  : never;
export type Page<P extends CursorPath> = JsonSuccess<ListOperation<P>>;
type CursorPage = { data: unknown[]; meta: { next_cursor?: string | null } };
export type PageOptions<P extends CursorPath> = Omit<FetchOptions<ListOperation<P>>, 'params'> & {
  params?: { query?: Omit<NonNullable<ListOperation<P>['parameters']['query']>, 'cursor' | 'offset'> };
};

/** Each page of a list, following meta.next_cursor to the end; a refusal is thrown as an ExtensionApiError. */
export async function* pages<P extends CursorPath>(
  client: Client<paths>,
  path: P,
  options?: PageOptions<P>,
): AsyncGenerator<Page<P>> {
  let cursor: string | undefined;
  do {
    const init = {
      ...options,
      params: { query: { ...options?.params?.query, ...(cursor === undefined ? {} : { cursor }) } },
    };
    const page = unwrap(
      await (
        client.GET as (
          path: string,
          init: unknown,
        ) => Promise<{ data?: CursorPage; error?: unknown; response: Response }>
      )(path, init),
    );
    yield page as Page<P>;
    cursor = page.meta.next_cursor ?? undefined;
  } while (cursor !== undefined);
}

/** Each item of a list, page after page. */
export async function* items<P extends CursorPath>(
  client: Client<paths>,
  path: P,
  options?: PageOptions<P>,
): AsyncGenerator<Page<P> extends { data: Array<infer Item> } ? Item : never> {
  for await (const page of pages(client, path, options)) yield* (page as CursorPage).data as never[];
}
