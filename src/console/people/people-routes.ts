import type { FastifyReply, FastifyRequest } from 'fastify';
import { createUser, listUsers, updatePerson } from '../../admin/user.js';
import type { UserRole } from '../../db/tables/people.js';
import { USER_ROLES } from '../../identity/mcp-authorization/people.js';
import {
  doneNotices,
  type DoneWord,
  refusalOf,
  pageError,
  actorOf,
  asPerson,
  type ConsoleContext,
  type ConsoleSection,
  formText,
  needs,
  readStore,
  render,
  viewerOf,
} from '../console-context.js';
import { mayIn } from '../console-roles.js';
import { type Html, html } from '../html.js';
import { CONSOLE_PATH, csrfField, type Notice, type Viewer } from '../layout.js';

const PEOPLE_PATH = `${CONSOLE_PATH}/people`;

const DONE = doneNotices({
  disabled: 'The person is disabled: they are signed out and their assistant’s tokens are refused.',
  enabled: 'The person is enabled again.',
  role: 'The role is changed; it applies from their next page.',
});

type Person = Awaited<ReturnType<typeof listUsers>>[number];

function roleOptions(selected: UserRole | undefined): Html {
  return html`${USER_ROLES.map((role) => html`<option value="${role}"${role === selected ? html` selected` : ''}>${role}</option>`)}`;
}

function personActions(viewer: Viewer, person: Person): Html {
  if (!mayIn(viewer.person.role, 'administer') || person.id === viewer.person.id) return html``;
  const next = person.status === 'active' ? 'disabled' : 'active';
  return html`<form method="post" action="${PEOPLE_PATH}/${person.id}/role" class="inline">${csrfField(viewer)}
<label class="visually-hidden" for="role-${person.id}">Role of ${person.name}</label><select id="role-${person.id}" name="role">${roleOptions(person.role)}</select>
<button type="submit" class="secondary">Change role</button></form>
<form method="post" action="${PEOPLE_PATH}/${person.id}/status" class="inline">${csrfField(viewer)}<input type="hidden" name="status" value="${next}">
<button type="submit" class="${next === 'disabled' ? 'danger' : 'secondary'}">${next === 'disabled' ? 'Disable' : 'Enable'} ${person.name}</button></form>`;
}

function createForm(viewer: Viewer, values: Record<string, string> = {}): Html {
  if (!mayIn(viewer.person.role, 'administer')) return html``;
  return html`<h2>Add a person</h2><form method="post" action="${PEOPLE_PATH}" class="stack">${csrfField(viewer)}
<label for="name">Name</label><input id="name" name="name" type="text" value="${values.name}" required>
<label for="email">Email</label><input id="email" name="email" type="email" value="${values.email}" required>
<label for="role">Role</label><select id="role" name="role">${roleOptions((values.role || 'staff') as UserRole)}</select>
<button type="submit">Add the person</button></form>`;
}

async function peoplePage(
  ctx: ConsoleContext,
  request: FastifyRequest,
  reply: FastifyReply,
  notice?: Notice,
  values?: Record<string, string>,
  status = 200,
) {
  const viewer = viewerOf(request);
  const people = await listUsers(readStore(ctx, viewer.person));
  const rows = people.map(
    (person) =>
      html`<tr><td>${person.name}</td><td>${person.email}</td><td>${person.role}</td><td>${person.status}</td><td>${personActions(viewer, person)}</td></tr>`,
  );
  return render(
    request,
    reply,
    'People',
    html`<p>The people of this agency who sign in to this console and connect assistants through the MCP surface.</p>
<table><caption>People</caption><thead><tr><th scope="col">Name</th><th scope="col">Email</th><th scope="col">Role</th><th scope="col">Status</th><th scope="col">Actions</th></tr></thead><tbody>${rows}</tbody></table>
${createForm(viewer, values)}`,
    notice,
    status,
  );
}

/** A change to one person of the viewer's agency; another agency's person (or none) is a 404 page. */
async function changePerson(
  ctx: ConsoleContext,
  request: FastifyRequest<{ Params: { id: string } }>,
  reply: FastifyReply,
  change: { status: 'active' | 'disabled' } | { role: UserRole },
  done: DoneWord<typeof DONE>,
) {
  const { person } = viewerOf(request);
  if (request.params.id === person.id)
    return peoplePage(
      ctx,
      request,
      reply,
      { kind: 'refused', text: 'You cannot change your own role or status.' },
      {},
      400,
    );
  const operation = 'status' in change ? (change.status === 'active' ? 'enableUser' : 'disableUser') : 'changeUserRole';
  const updated = await asPerson(ctx, person, { operation, resourceType: 'user' }, (store) =>
    updatePerson(store, { id: request.params.id }, change),
  );
  if (!updated) throw pageError(404, 'There is no such person in this agency.');
  return DONE.redirect(reply, PEOPLE_PATH, done);
}

export const peopleSection: ConsoleSection = {
  nav: { path: PEOPLE_PATH, label: 'People', capability: 'read' },
  register(scope, ctx) {
    scope.get('/people', async (request, reply) => peoplePage(ctx, request, reply, DONE.of(request)));

    scope.post('/people', { preHandler: needs('administer') }, async (request, reply) => {
      const { person } = viewerOf(request);
      const values = {
        name: formText(request, 'name'),
        email: formText(request, 'email'),
        role: formText(request, 'role'),
      };
      try {
        const created = await createUser(
          ctx.db,
          { agencyId: person.agencyId, email: values.email, name: values.name, role: values.role as UserRole },
          actorOf(person),
        );
        return render(
          request,
          reply,
          'Person added',
          html`<p>${values.name} can sign in at this console with the email ${created.email} and this initial password, shown only now. Hand it over in person: the first sign-in replaces it with their own.</p>
<p class="secret">${created.initialPassword}</p><p><a href="${PEOPLE_PATH}">Back to the people</a></p>`,
          { kind: 'done', text: `${values.name} is added as ${values.role}.` },
        );
      } catch (err) {
        return peoplePage(ctx, request, reply, refusalOf(err), values, 400);
      }
    });

    scope.post<{ Params: { id: string } }>(
      '/people/:id/status',
      { preHandler: needs('administer') },
      (request, reply) =>
        changePerson(
          ctx,
          request,
          reply,
          { status: formText(request, 'status') === 'active' ? 'active' : 'disabled' },
          formText(request, 'status') === 'active' ? 'enabled' : 'disabled',
        ),
    );

    scope.post<{ Params: { id: string } }>(
      '/people/:id/role',
      { preHandler: needs('administer') },
      async (request, reply) => {
        const role = formText(request, 'role') as UserRole;
        if (!USER_ROLES.includes(role))
          return peoplePage(
            ctx,
            request,
            reply,
            { kind: 'refused', text: `A role is one of ${USER_ROLES.join(', ')}.` },
            {},
            400,
          );
        return changePerson(ctx, request, reply, { role }, 'role');
      },
    );
  },
};
