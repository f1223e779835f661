import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import type { Teardown } from './database.js';
import { freePort } from './ports.js';

export interface HeadlessPage {
  /** A DevTools protocol command on the page. */
  send(method: string, params?: object): Promise<any>;
  /** Calls `listener` with the params of every DevTools protocol event named `method` (enable its domain first). */
  on(method: string, listener: (params: any) => void): void;
  /** The value of an expression evaluated in the page (promises awaited). */
  evaluate<T = unknown>(expression: string): Promise<T>;
  /** Opens `url` and waits for its load event (a change of fragment only is done at once: nothing loads). */
  navigate(url: string): Promise<void>;
  /** A PNG of the viewport (or of the whole page) written to `path`. */
  screenshot(path: string, fullPage?: boolean): Promise<void>;
  /** Waits until `expression` is truthy in the page, up to `timeoutMs`; false when it never was. */
  waitFor(expression: string, timeoutMs?: number): Promise<boolean>;
}

/** Where Debian's `chromium` package puts the browser; tests that need it are skipped without it. */
export const CHROMIUM = '/usr/bin/chromium';

/**
 * Debian's headless Chromium, driven through the DevTools protocol over its WebSocket (Node's global WebSocket:
 * on Node 20 run with --experimental-websocket).
 */
export async function openHeadlessChromium(t: Teardown, size = { width: 1280, height: 900 }): Promise<HeadlessPage> {
  const debugPort = await freePort();
  const chromium = spawn(
    CHROMIUM,
    [
      '--headless=new',
      '--no-sandbox',
      '--disable-gpu',
      `--remote-debugging-port=${debugPort}`,
      `--window-size=${size.width},${size.height}`,
      'about:blank',
    ],
    { stdio: 'ignore' },
  );
  t.teardown(() => void chromium.kill());
  let targets: { type: string; webSocketDebuggerUrl: string }[] = [];
  for (let i = 0; i < 50 && targets.length === 0; i++) {
    await new Promise((r) => setTimeout(r, 200));
    targets = await fetch(`http://127.0.0.1:${debugPort}/json`).then(
      (r) => r.json() as never,
      () => [],
    );
  }
  const ws = new WebSocket(targets.find((target) => target.type === 'page')!.webSocketDebuggerUrl);
  await new Promise((r) => ws.addEventListener('open', r));
  t.teardown(() => ws.close());
  let id = 0;
  const listeners: { method: string; listener: (params: any) => void }[] = [];
  const pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  ws.addEventListener('message', (m) => {
    const msg = JSON.parse(String(m.data));
    for (const { method, listener } of [...listeners]) if (msg.method === method) listener(msg.params);
    const waiting = msg.id && pending.get(msg.id);
    if (!waiting) return;
    pending.delete(msg.id);
    if (msg.error) waiting.reject(new Error(`${msg.error.message} (${msg.error.code})`));
    else waiting.resolve(msg.result);
  });
  const send = (method: string, params: object = {}) =>
    new Promise<any>((resolve, reject) => {
      pending.set(++id, { resolve, reject });
      ws.send(JSON.stringify({ id, method, params }));
    });
  const nextEvent = (method: string) =>
    new Promise((resolve) => {
      const entry = {
        method,
        listener: (params: unknown) => {
          listeners.splice(listeners.indexOf(entry), 1);
          resolve(params);
        },
      };
      listeners.push(entry);
    });
  const evaluate = async <T>(expression: string): Promise<T> => {
    const { result, exceptionDetails } = await send('Runtime.evaluate', {
      expression,
      returnByValue: true,
      awaitPromise: true,
    });
    if (exceptionDetails)
      throw new Error(`in the page: ${exceptionDetails.exception?.description ?? exceptionDetails.text}`);
    return result.value as T;
  };
  await send('Page.enable');
  return {
    send,
    evaluate,
    on: (method, listener) => void listeners.push({ method, listener }),
    async navigate(url) {
      const loaded = nextEvent('Page.loadEventFired');
      const { loaderId, errorText } = await send('Page.navigate', { url });
      if (errorText) throw new Error(`${url}: ${errorText}`);
      if (loaderId) await loaded;
    },
    async screenshot(path, fullPage = false) {
      const { data } = await send('Page.captureScreenshot', { format: 'png', captureBeyondViewport: fullPage });
      writeFileSync(path, Buffer.from(data, 'base64'));
    },
    async waitFor(expression, timeoutMs = 10_000) {
      for (const start = Date.now(); Date.now() - start < timeoutMs; await new Promise((r) => setTimeout(r, 200))) {
        if (await evaluate<boolean>(`Boolean(${expression})`).catch(() => false)) return true;
      }
      return false;
    },
  };
}
