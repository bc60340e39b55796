/** Shared by the tests that check a secret never reaches a record, whole or in part. */
import { expect } from 'vitest';

/** The secret shown as its first characters, so that a failing test does not print it whole. */
const nameOf = (secret: string) => `${secret.slice(0, 4)}…`;

/** Fails when `text` (named `where`) holds any 8-character piece of `secret`: a partial mask leaks too. */
export function expectNoPieceOf(secret: string, text: string, where: string): void {
  for (let i = 0; i + 8 <= secret.length; i++) {
    const piece = secret.slice(i, i + 8);
    expect(text.includes(piece), `${where} holds ${piece} of ${nameOf(secret)}`).toBe(false);
  }
}
