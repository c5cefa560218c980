// An ICO file (what /favicon.ico is) holding PNG images, as every browser since Windows Vista's
// era reads it: a 6-byte header, a 16-byte entry per image, then the images themselves.

export interface IcoImage {
  /** Width and height in pixels, at most 256. */
  size: number;
  png: Uint8Array;
}

const HEADER = 6;
const ENTRY = 16;

export function ico(images: IcoImage[]): Uint8Array<ArrayBuffer> {
  const length = HEADER + ENTRY * images.length + images.reduce((sum, { png }) => sum + png.length, 0);
  const bytes = new Uint8Array(length);
  const view = new DataView(bytes.buffer);
  view.setUint16(2, 1, true); // type: icon
  view.setUint16(4, images.length, true);
  let offset = HEADER + ENTRY * images.length;
  for (const [index, { size, png }] of images.entries()) {
    if (!Number.isInteger(size) || size < 1 || size > 256)
      throw new RangeError(`An icon is 1–256 px, not ${size}`);
    const entry = HEADER + ENTRY * index;
    view.setUint8(entry, size % 256); // width; 0 stands for 256
    view.setUint8(entry + 1, size % 256); // height
    view.setUint16(entry + 4, 1, true); // colour planes
    view.setUint16(entry + 6, 32, true); // bits per pixel
    view.setUint32(entry + 8, png.length, true);
    view.setUint32(entry + 12, offset, true);
    bytes.set(png, offset);
    offset += png.length;
  }
  return bytes;
}
