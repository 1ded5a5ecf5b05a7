// fake.mjs: imported first by a corpus writer, before pi is loaded, it makes
// pi's output reproducible: randomness (crypto.randomUUID for entry ids,
// crypto.getRandomValues for uuidv7 session ids) is seeded, and every
// `new Date()` / `Date.now()` without arguments reads a fake clock that then
// advances by one second. Exports the clock.
import crypto from "node:crypto";
import { syncBuiltinESMExports } from "node:module";

// Seeded randomness (mulberry32).
let seed = 0xf1a75eed;
function rand32() {
	seed = (seed + 0x6d2b79f5) | 0;
	let t = seed;
	t = Math.imul(t ^ (t >>> 15), t | 1);
	t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
	return (t ^ (t >>> 14)) >>> 0;
}
function randomBytes(n) {
	const b = new Uint8Array(n);
	for (let i = 0; i < n; i++) b[i] = rand32() & 0xff;
	return b;
}
crypto.randomUUID = () => {
	const b = randomBytes(16);
	b[6] = (b[6] & 0x0f) | 0x40;
	b[8] = (b[8] & 0x3f) | 0x80;
	const h = Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");
	return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
};
syncBuiltinESMExports();
globalThis.crypto.getRandomValues = (arr) => {
	const b = randomBytes(arr.byteLength);
	new Uint8Array(arr.buffer, arr.byteOffset, arr.byteLength).set(b);
	return arr;
};

const RealDate = Date;
export const clock = {
	t: RealDate.UTC(2025, 6, 1, 8, 0, 0, 0),
	read() {
		const v = this.t;
		this.t += 1000;
		return v;
	},
	peek() {
		return this.t;
	},
};
class FakeDate extends RealDate {
	constructor(...args) {
		if (args.length === 0) super(clock.read());
		else super(...args);
	}
	static now() {
		return clock.read();
	}
}
globalThis.Date = FakeDate;
