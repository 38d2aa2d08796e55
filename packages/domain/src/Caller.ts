import { Schema } from "effect"

/**
 * Who is calling, and so who pays for what the call creates: a workspace, acting through one of its
 * API keys (whose 24-hour spend cap applies, contract §3) or, with `keyId` null, through the portal,
 * to which no cap applies. Every charge is taken from the workspace's allowance.
 */
export const Caller = Schema.Struct({
  workspaceId: Schema.String,
  keyId: Schema.NullOr(Schema.String),
  /** the key's cap as read when the key was authenticated; null without a cap or without a key */
  spendCap24h: Schema.NullOr(Schema.Number)
})
export interface Caller extends Schema.Schema.Type<typeof Caller> {}
