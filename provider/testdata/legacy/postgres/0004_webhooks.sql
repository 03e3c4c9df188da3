-- Webhook endpoints, their deliveries and the record of every post.
-- Conventions as in 0001-0003; every optional time here (previous secret
-- expiry, failing since, next attempt, lease, delivered at) is NULL for the
-- zero time, which the claim's "IS NULL OR <= now" treats as due and its
-- "NULLS FIRST" order puts first. Deleting an endpoint deletes its
-- deliveries and their attempts through ON DELETE CASCADE.

CREATE TABLE webhook_endpoints (
    id                         TEXT COLLATE "C" NOT NULL PRIMARY KEY,
    organization_id            TEXT COLLATE "C" NOT NULL REFERENCES organizations (id),
    url                        TEXT        NOT NULL,
    -- The sealed secrets, as the engine passes them.
    secret                     BYTEA       NOT NULL,
    -- NULL when there is no previous secret.
    previous_secret            BYTEA,
    previous_secret_expires_at TIMESTAMPTZ,
    enabled                    BOOLEAN     NOT NULL,
    disabled_reason            TEXT        NOT NULL,
    failing_since              TIMESTAMPTZ,
    created_at                 TIMESTAMPTZ NOT NULL,
    updated_at                 TIMESTAMPTZ NOT NULL
);

-- ListWebhookEndpoints: an organization's endpoints, oldest first.
CREATE INDEX webhook_endpoints_organization_created ON webhook_endpoints (organization_id, created_at, id);

CREATE TABLE deliveries (
    id               TEXT COLLATE "C" NOT NULL PRIMARY KEY,
    event_id         TEXT COLLATE "C" NOT NULL REFERENCES events (id),
    endpoint_id      TEXT COLLATE "C" NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
    organization_id  TEXT COLLATE "C" NOT NULL REFERENCES organizations (id),
    status           TEXT        NOT NULL,
    attempts         BIGINT      NOT NULL,
    next_attempt_at  TIMESTAMPTZ,
    lease_owner      TEXT        NOT NULL,
    leased_until     TIMESTAMPTZ,
    -- 0 when no response came back.
    last_status_code BIGINT      NOT NULL,
    last_error       TEXT        NOT NULL,
    delivered_at     TIMESTAMPTZ,
    created_at       TIMESTAMPTZ NOT NULL,
    updated_at       TIMESTAMPTZ NOT NULL,
    -- One delivery of an event to an endpoint. Also the index of a
    -- delivery list by event (and of the foreign key's check on events).
    UNIQUE (event_id, endpoint_id)
);

-- ClaimDueDeliveries: pending deliveries in due order (never scheduled
-- first). Partial, so settled deliveries are not in it; the claim query
-- spells the same literal so the planner can use it.
CREATE INDEX deliveries_due ON deliveries (next_attempt_at NULLS FIRST, id)
    WHERE status = 'pending';
-- An endpoint's deliveries by status; also what the cascade from
-- webhook_endpoints searches.
CREATE INDEX deliveries_endpoint_status ON deliveries (endpoint_id, status);
-- ListDeliveries: an organization's deliveries, oldest first.
CREATE INDEX deliveries_organization_created ON deliveries (organization_id, created_at, id);

CREATE TABLE delivery_attempts (
    -- The order the posts were recorded in, which breaks ties of
    -- attempted_at.
    id           BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    delivery_id  TEXT COLLATE "C" NOT NULL REFERENCES deliveries (id) ON DELETE CASCADE,
    attempted_at TIMESTAMPTZ NOT NULL,
    -- 0 when no response came back.
    status_code  BIGINT      NOT NULL,
    error        TEXT        NOT NULL,
    duration_ns  BIGINT      NOT NULL
);

-- ListDeliveryAttempts: a delivery's posts, oldest first; also what the
-- cascade from deliveries searches.
CREATE INDEX delivery_attempts_delivery ON delivery_attempts (delivery_id, attempted_at, id);
