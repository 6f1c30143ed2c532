/**
 * Identity (issue 9): CF IDs, e-mail codes and the outbox, sessions, SIWE and signed-request nonces, personal accounts.
 * Secrets are never stored: codes are HMACs, session tokens SHA-256 digests. Addresses are stored lower-case.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE identities (
      cf_id text PRIMARY KEY CHECK (cf_id ~ '^cf_[a-z2-7]{12}$'),
      email text CHECK (email = lower(email) AND char_length(email) BETWEEN 3 AND 254),
      wallet_address text CHECK (wallet_address ~ '^0x[0-9a-f]{40}$'),
      display_name text NOT NULL CHECK (char_length(display_name) BETWEEN 1 AND 64),
      referral_code text NOT NULL UNIQUE CHECK (referral_code ~ '^cf_ref_[a-z2-7]{8}$'),
      points_balance bigint NOT NULL DEFAULT 0,
      created_ip text,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      CHECK (email IS NOT NULL OR wallet_address IS NOT NULL)
    )
  `
  // One CF ID per e-mail (stored lower-case, so unique regardless of how it was typed) and per wallet.
  yield* sql`CREATE UNIQUE INDEX identities_email ON identities (email) WHERE email IS NOT NULL`
  yield* sql`CREATE UNIQUE INDEX identities_wallet ON identities (wallet_address) WHERE wallet_address IS NOT NULL`
  // The sign-up limit counts an address's creations in the last 24 hours.
  yield* sql`CREATE INDEX identities_created_ip ON identities (created_ip, created_at) WHERE created_ip IS NOT NULL`

  // Who owns the credits. Migration 0005 adds the balance, reservations and caps.
  yield* sql`
    CREATE TABLE accounts (
      id bigserial PRIMARY KEY,
      owner_cf_id text REFERENCES identities (cf_id),
      kind text NOT NULL CHECK (kind IN ('personal', 'organization')),
      created_at timestamptz NOT NULL DEFAULT now()
    )
  `
  // One personal account per identity; an owner may hold several organization accounts (a later issue).
  yield* sql`CREATE UNIQUE INDEX accounts_personal_owner ON accounts (owner_cf_id) WHERE kind = 'personal'`

  yield* sql`
    CREATE TABLE email_codes (
      id bigserial PRIMARY KEY,
      email text NOT NULL CHECK (email = lower(email)),
      purpose text NOT NULL CHECK (purpose IN ('sign_in', 'add_email')),
      cf_id text REFERENCES identities (cf_id),
      code_hash text NOT NULL CHECK (code_hash ~ '^[0-9a-f]{64}$'),
      attempts integer NOT NULL DEFAULT 0 CHECK (attempts >= 0),
      requested_ip text,
      created_at timestamptz NOT NULL DEFAULT now(),
      expires_at timestamptz NOT NULL,
      consumed_at timestamptz,
      CHECK ((purpose = 'add_email') = (cf_id IS NOT NULL))
    )
  `
  // The latest code of an address (verification) and the per-address and per-IP request limits.
  yield* sql`CREATE INDEX email_codes_email ON email_codes (email, created_at DESC)`
  yield* sql`CREATE INDEX email_codes_ip ON email_codes (requested_ip, created_at) WHERE requested_ip IS NOT NULL`

  // Mail that was not sent because no SMTP server is configured (local runs): what it would have said.
  yield* sql`
    CREATE TABLE mail_outbox (
      id bigserial PRIMARY KEY,
      to_address text NOT NULL,
      subject text NOT NULL,
      body_text text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now()
    )
  `
  yield* sql`CREATE INDEX mail_outbox_to ON mail_outbox (to_address, created_at DESC)`

  yield* sql`
    CREATE TABLE sessions (
      token_hash text PRIMARY KEY CHECK (token_hash ~ '^[0-9a-f]{64}$'),
      cf_id text NOT NULL REFERENCES identities (cf_id),
      method text NOT NULL CHECK (method IN ('email', 'siwe')),
      created_ip text,
      created_at timestamptz NOT NULL DEFAULT now(),
      expires_at timestamptz NOT NULL
    )
  `
  yield* sql`CREATE INDEX sessions_cf_id ON sessions (cf_id, expires_at)`

  yield* sql`
    CREATE TABLE siwe_nonces (
      nonce text PRIMARY KEY CHECK (nonce ~ '^[A-Za-z0-9]{8,128}$'),
      requested_ip text,
      created_at timestamptz NOT NULL DEFAULT now(),
      expires_at timestamptz NOT NULL,
      consumed_at timestamptz
    )
  `
  yield* sql`CREATE INDEX siwe_nonces_expires ON siwe_nonces (expires_at)`

  // The primary key is what refuses a replay, also of two copies of one request arriving at once.
  yield* sql`
    CREATE TABLE signed_request_nonces (
      address text NOT NULL CHECK (address ~ '^0x[0-9a-f]{40}$'),
      nonce text NOT NULL,
      signed_at timestamptz NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (address, nonce)
    )
  `
})
