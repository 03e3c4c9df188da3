-- A known value sealed under the master key (engine.CheckMasterKey), so that
-- a process given another key than the one that sealed the database's
-- secrets refuses to start instead of failing every signed request. One row
-- at most. Conventions as in 0001-0006.
CREATE TABLE master_key_check (
    id         INTEGER     NOT NULL PRIMARY KEY CHECK (id = 1),
    sealed     BYTEA       NOT NULL,
    created_at TIMESTAMPTZ NOT NULL
);
