-- Webhook endpoints, their deliveries and the record of every post.
-- Conventions as in 0001-0003; every optional time here (previous secret
-- expiry, failing since, next attempt, lease, delivered at) is 0, not NULL,
-- for the zero time, so that "<= now" holds for it without a NULL case.
-- Deleting an endpoint deletes its deliveries and their attempts through
-- ON DELETE CASCADE (the connections set foreign_keys=1).

CREATE TABLE webhook_endpoints (
    id                         TEXT    NOT NULL PRIMARY KEY,
    organization_id            TEXT    NOT NULL REFERENCES organizations (id),
    url                        TEXT    NOT NULL,
    -- The sealed secrets, as the engine passes them.
    secret                     BLOB    NOT NULL,
    -- NULL when there is no previous secret.
    previous_secret            BLOB,
    previous_secret_expires_at INTEGER NOT NULL,
    enabled                    INTEGER NOT NULL CHECK (enabled IN (0, 1)),
    disabled_reason            TEXT    NOT NULL,
    failing_since              INTEGER NOT NULL,
    created_at                 INTEGER NOT NULL,
    updated_at                 INTEGER NOT NULL
) STRICT;

-- ListWebhookEndpoints: an organization's endpoints, oldest first.
CREATE INDEX webhook_endpoints_organization_created ON webhook_endpoints (organization_id, created_at, id);

CREATE TABLE deliveries (
    id               TEXT    NOT NULL PRIMARY KEY,
    event_id         TEXT    NOT NULL REFERENCES events (id),
    endpoint_id      TEXT    NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
    organization_id  TEXT    NOT NULL REFERENCES organizations (id),
    status           TEXT    NOT NULL,
    attempts         INTEGER NOT NULL,
    next_attempt_at  INTEGER NOT NULL,
    lease_owner      TEXT    NOT NULL,
    leased_until     INTEGER NOT NULL,
    -- 0 when no response came back.
    last_status_code INTEGER NOT NULL,
    last_error       TEXT    NOT NULL,
    delivered_at     INTEGER NOT NULL,
    created_at       INTEGER NOT NULL,
    updated_at       INTEGER NOT NULL,
    -- One delivery of an event to an endpoint. Also the index of a
    -- delivery list by event (and of the foreign key's check on events).
    UNIQUE (event_id, endpoint_id)
) STRICT;

-- ClaimDueDeliveries: pending deliveries in due order. Partial, so settled
-- deliveries are not in it; the claim query spells the same literal so the
-- planner can use it.
CREATE INDEX deliveries_due ON deliveries (next_attempt_at, id)
    WHERE status = 'pending';
-- An endpoint's deliveries by status; also what the cascade from
-- webhook_endpoints searches.
CREATE INDEX deliveries_endpoint_status ON deliveries (endpoint_id, status);
-- ListDeliveries: an organization's deliveries, oldest first.
CREATE INDEX deliveries_organization_created ON deliveries (organization_id, created_at, id);

CREATE TABLE delivery_attempts (
    -- The rowid: the order the posts were recorded in, which breaks ties
    -- of attempted_at.
    id           INTEGER PRIMARY KEY,
    delivery_id  TEXT    NOT NULL REFERENCES deliveries (id) ON DELETE CASCADE,
    attempted_at INTEGER NOT NULL,
    -- 0 when no response came back.
    status_code  INTEGER NOT NULL,
    error        TEXT    NOT NULL,
    duration_ns  INTEGER NOT NULL
) STRICT;

-- ListDeliveryAttempts: a delivery's posts, oldest first (the index's
-- entries end with the rowid, so it also orders ties); also what the
-- cascade from deliveries searches.
CREATE INDEX delivery_attempts_delivery ON delivery_attempts (delivery_id, attempted_at);
