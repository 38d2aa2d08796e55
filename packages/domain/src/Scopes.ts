import { Schema } from "effect"

/** Scopes are fixed at mint time, default-deny, exact match: no scope implies another. */
export const scopes = ["media:read", "media:write", "renders:create", "renders:read"] as const
export const Scope = Schema.Literals(scopes)
export type Scope = typeof Scope.Type
export const isScope = (s: string): s is Scope => (scopes as ReadonlyArray<string>).includes(s)
export const grants = (held: ReadonlyArray<string>, required: Scope): boolean => held.includes(required)
