/** Types for scripts/client-claims.mjs: docs/clients.md's table of what each client gets, and its proofs. */
export interface ClaimProof {
  suite: 'clients' | 'main';
  /** A regular expression a passed test's title matches. */
  title: string;
}
export type ClaimCell = { yes: ClaimProof[] } | { no: string } | { untested: true };
export interface Claims {
  columns: Array<{ id: string; title: string }>;
  rows: Array<{ client: string; title: string; versions: string; cells: Record<string, ClaimCell> }>;
}
export const CLAIMS_PATH: URL;
export const TABLE_START: string;
export const TABLE_END: string;
export function loadClaims(path?: URL | string): Claims;
export function claimProblems(claims: Claims): string[];
export function renderClaims(claims: Claims): string;
export function fillClaims(text: string, claims: Claims): string | null;
export function testsIn(tap: string): { passed: Set<string>; skipped: Set<string> };
export function checkClaims(claims: Claims, suite: 'clients' | 'main', tap: string): { failures: string[]; unverified: string[] };
