/**
 * Organizations (issue 12): an organization is an account of kind 'organization' (its balance, caps and keys are the
 * ledger's, as for a personal account) with a name, an owner and members, each with exactly one role. An identity's
 * active context is its personal account (null) or one organization it belongs to. Invitations admit members.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE organizations (
      account_id bigint PRIMARY KEY REFERENCES accounts (id),
      id text NOT NULL UNIQUE CHECK (id ~ '^org_[a-z2-7]{12}$'),
      name text NOT NULL CHECK (char_length(name) BETWEEN 1 AND 100),
      owner_cf_id text NOT NULL REFERENCES identities (cf_id),
      created_at timestamptz NOT NULL DEFAULT now(),
      deleted_at timestamptz
    )
  `
  // "A user can own at most 10 organizations" counts the live ones.
  yield* sql`CREATE INDEX organizations_owner ON organizations (owner_cf_id) WHERE deleted_at IS NULL`
  yield* sql`
    CREATE TABLE organization_members (
      account_id bigint NOT NULL REFERENCES organizations (account_id),
      cf_id text NOT NULL REFERENCES identities (cf_id),
      role text NOT NULL CHECK (role IN ('owner', 'admin', 'member')),
      joined_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (account_id, cf_id)
    )
  `
  yield* sql`CREATE UNIQUE INDEX organization_members_one_owner ON organization_members (account_id) WHERE role = 'owner'`
  yield* sql`CREATE INDEX organization_members_identity ON organization_members (cf_id)`
  // An invitation's link carries a one-time token; only its SHA-256 is kept. Expiry is by time (status stays pending).
  yield* sql`
    CREATE TABLE organization_invitations (
      id text PRIMARY KEY CHECK (id ~ '^inv_[0-9a-f]{16}$'),
      account_id bigint NOT NULL REFERENCES organizations (account_id),
      email text NOT NULL CHECK (email = lower(email) AND char_length(email) BETWEEN 3 AND 254),
      role text NOT NULL CHECK (role IN ('admin', 'member')),
      token_hash text NOT NULL UNIQUE CHECK (token_hash ~ '^[0-9a-f]{64}$'),
      invited_by_cf_id text NOT NULL REFERENCES identities (cf_id),
      status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'accepted', 'revoked')),
      created_at timestamptz NOT NULL DEFAULT now(),
      expires_at timestamptz NOT NULL,
      accepted_by_cf_id text REFERENCES identities (cf_id),
      accepted_at timestamptz,
      revoked_at timestamptz,
      CHECK ((status = 'accepted') = (accepted_at IS NOT NULL)),
      CHECK ((status = 'revoked') = (revoked_at IS NOT NULL))
    )
  `
  // One open invitation per address and organization (an expired one is replaced in place).
  yield* sql`CREATE UNIQUE INDEX organization_invitations_open ON organization_invitations (account_id, email) WHERE status = 'pending'`
  // The active context: null is the personal account.
  yield* sql`ALTER TABLE identities ADD COLUMN active_account_id bigint REFERENCES accounts (id)`
})
