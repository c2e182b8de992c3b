-- Key management over HTTP (spec "Account and keys", DESIGN 5.9): a key's contact address and
-- fairness weight, the account's active-key cap, and the browser origins a key is limited to
-- (none: not limited).
ALTER TABLE api_keys ADD COLUMN email TEXT NOT NULL DEFAULT '';
ALTER TABLE api_keys ADD COLUMN weight REAL NOT NULL DEFAULT 1 CHECK (weight > 0);
ALTER TABLE accounts ADD COLUMN key_cap INTEGER NOT NULL DEFAULT 10 CHECK (key_cap >= 1);

CREATE TABLE key_origins (
    key_id TEXT NOT NULL REFERENCES api_keys (id),
    origin TEXT NOT NULL,
    PRIMARY KEY (key_id, origin)
);
