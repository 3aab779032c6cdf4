-- Named API tokens with roles, and who asked for each change in the event log.

-- A token is stored as the SHA-256 of its secret (hex), never the secret.
-- A revoked token keeps its row, so that its name is not given to another
-- token and the event log's names stay unambiguous.
CREATE TABLE api_tokens (
    name TEXT PRIMARY KEY NOT NULL,
    role TEXT NOT NULL CHECK (role IN ('read', 'operate', 'admin')),
    digest TEXT NOT NULL UNIQUE,
    created_at INTEGER NOT NULL,
    -- the token that created it
    created_by TEXT,
    -- recorded at most once a minute per token
    last_used_at INTEGER,
    revoked_at INTEGER
);

-- The name of the token whose request recorded the event ('bootstrap' for
-- OSDKEEPER_TOKEN, 'anonymous' on a daemon without tokens); NULL when the
-- daemon acted on its own (workers, poller).
ALTER TABLE events ADD COLUMN actor TEXT;
