/**
 * The bench's stored bills (bench/logs.ts): one INSERT ... SELECT generate_series shaped as settlement writes them
 * (usage, a two-leg bill, one attempt), spread over the last 30 days, over the models and keys given, with a fallback
 * every 41st request and an interruption every 97th, written in time order. Parameters: $1 account id, $2 rows, $3 key ids, $4 model keys.
 */
export const MODELS = ["openai/gpt-4.1", "openai/gpt-4.1-nano", "anthropic/claude-sonnet-4.5", "google/gemini-2.5-flash", "deepseek/deepseek-reasoner", "openai/gpt-5"]

export const SEED_SQL = `INSERT INTO generations (id, account_id, api_key_id, inbound_format, stream, status, model_requested, model_used, provider,
         upstream_key, chooser, usage, bill, attempts, hold_wei, charge_wei, cache_read_tokens, cache_write_5m_tokens,
         cache_write_1h_tokens, created_at, settled_at)
       SELECT 'gen_' || lpad(to_hex(i), 24, '0'), $1::bigint, ($3::text[])[1 + i % array_length($3::text[], 1)],
         CASE WHEN i % 3 = 0 THEN 'messages' ELSE 'chat' END, i % 2 = 0,
         CASE WHEN i % 97 = 0 THEN 'interrupted' ELSE 'completed' END,
         m.requested, m.used, split_part(m.used, '/', 1), split_part(m.used, '/', 1) || '#1', NULL,
         jsonb_build_object('freshInput', t.input, 'cacheRead', t.cached, 'cacheWrite5m', NULL, 'cacheWrite1h', NULL,
           'output', t.output, 'reasoning', NULL, 'source', 'vendor'),
         jsonb_build_object('legs', jsonb_build_array(
             jsonb_build_object('kind', 'input', 'tokens', t.input, 'rateUsd18PerMillion', '2000000000000000000', 'provenance', 'observed', 'pricedAs', 'input'),
             jsonb_build_object('kind', 'output', 'tokens', t.output, 'rateUsd18PerMillion', '8000000000000000000', 'provenance', 'observed', 'pricedAs', 'output')),
           'tierFromInputTokens', NULL, 'subtotalUsd18', ((t.input * 2 + t.output * 8) * 1000000000000)::text,
           'markup', jsonb_build_object('numerator', 105, 'denominator', 100), 'pegUsd18', '1000000000000000000',
           'priceEffectiveFrom', '2026-11-01T00:00:00.000Z', 'priceObservedAt', '2026-11-01T00:00:00.000Z',
           'revision', jsonb_build_object('revisionVersion', 100, 'metadataHash', '0x' || repeat('ab', 32))),
         jsonb_build_array(jsonb_build_object('model', m.used, 'provider', split_part(m.used, '/', 1), 'key', split_part(m.used, '/', 1) || '#1',
           'outcome', 'served', 'status', 200, 'message', NULL, 'ms', 300 + i % 900)),
         ((t.input * 2 + t.output * 8) * 1050000000000)::numeric * 2, (t.input * 2 + t.output * 8) * 1050000000000::numeric,
         COALESCE(t.cached, 0), 0, 0, c.at, c.at
       FROM generate_series(1::bigint, $2::bigint) AS i
       -- A spread over the last 30 days from a multiplicative hash of i: uniform enough, and the same every run.
       CROSS JOIN LATERAL (SELECT now() - ((i * 2654435761) % 2592000000) * interval '1 millisecond' AS at) c
       CROSS JOIN LATERAL (SELECT 50 + (i * 7919) % 4000 AS input, 20 + (i * 104729) % 1500 AS output,
         CASE WHEN i % 5 = 0 THEN (i * 31) % 2000 END AS cached) t
       CROSS JOIN LATERAL (SELECT ($4::text[])[1 + (i * 13) % array_length($4::text[], 1)] AS requested) r
       CROSS JOIN LATERAL (SELECT r.requested,
         CASE WHEN i % 41 = 0 THEN ($4::text[])[1 + (i * 13 + 1) % array_length($4::text[], 1)] ELSE r.requested END AS used) m
       -- Settlement appends bills as requests end: the table's order follows time, as it does in service.
       ORDER BY c.at`
