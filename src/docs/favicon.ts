import type { FastifyInstance } from 'fastify';

const SIZE = 16;

/**
 * A 16x16 icon drawn here (a disc in the reference page's accent colour) rather than a binary asset: an ICO file of
 * one uncompressed 32-bit image. Browsers ask for /favicon.ico on every page, the API's JSON included; a 404 there
 * would fill the logs with misses.
 */
function drawIcon(): Buffer {
  const header = Buffer.alloc(6 + 16 + 40);
  header.writeUInt16LE(1, 2); // ICONDIR: type icon
  header.writeUInt16LE(1, 4); // one image
  header.writeUInt8(SIZE, 6);
  header.writeUInt8(SIZE, 7);
  header.writeUInt16LE(1, 10); // colour planes
  header.writeUInt16LE(32, 12); // bits per pixel
  const pixels = Buffer.alloc(SIZE * SIZE * 4);
  const mask = Buffer.alloc(SIZE * 4); // the AND mask, all zero: the alpha channel decides
  header.writeUInt32LE(40 + pixels.length + mask.length, 14);
  header.writeUInt32LE(22, 18); // the image follows the directory
  header.writeUInt32LE(40, 22); // BITMAPINFOHEADER
  header.writeInt32LE(SIZE, 26);
  header.writeInt32LE(SIZE * 2, 30); // an icon's bitmap counts its AND mask's rows too
  header.writeUInt16LE(1, 34);
  header.writeUInt16LE(32, 36);
  const centre = (SIZE - 1) / 2;
  for (let y = 0; y < SIZE; y++) {
    for (let x = 0; x < SIZE; x++) {
      if ((x - centre) ** 2 + (y - centre) ** 2 > (SIZE / 2) ** 2) continue;
      pixels.writeUInt32LE(0xff_2a_6f_db, (y * SIZE + x) * 4); // BGRA in memory: opaque blue
    }
  }
  return Buffer.concat([header, pixels, mask]);
}

export function registerFavicon(app: FastifyInstance): void {
  const icon = drawIcon();
  app.get('/favicon.ico', async (_request, reply) =>
    reply.type('image/x-icon').header('cache-control', 'public, max-age=86400').send(icon),
  );
}
