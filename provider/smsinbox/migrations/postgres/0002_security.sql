-- Storage's migration 0007 before migration lines.
-- The SMS inbox after the security review (a forger holding a device token): held messages are
-- found by the balance they follow (an index, not a scan), counted per
-- wallet and status (the cap on held messages, the operator's alarms),
-- bounded per organization by its settings; and a payout an SMS matched can
-- wait for an operator's confirmation. Conventions as in 0001-0006.

-- The chain balances a parsed message follows: its balance less its change,
-- and less its change without the commission when that differs (see
-- smsinbox.PreviousBalances). NULL for an unparsed message and for messages
-- stored before this migration, which the lookup also reads until they
-- leave 'held'.
ALTER TABLE sms_messages ADD COLUMN prev_balance NUMERIC;
ALTER TABLE sms_messages ADD COLUMN prev_balance_alt NUMERIC;

-- The held message that continues a chain, by the balance it follows.
CREATE INDEX sms_messages_follows ON sms_messages (wallet_id, prev_balance) WHERE status = 'held';
CREATE INDEX sms_messages_follows_alt ON sms_messages (wallet_id, prev_balance_alt) WHERE status = 'held';
-- Held messages from before this migration, until they leave 'held'.
CREATE INDEX sms_messages_held_legacy ON sms_messages (wallet_id) WHERE status = 'held' AND prev_balance IS NULL;
-- Expiry and the cap: a wallet's oldest held messages, by when payd got them.
CREATE INDEX sms_messages_held_age ON sms_messages (wallet_id, created_at, id) WHERE status = 'held';

-- How many messages each wallet has in each status ('' for messages of no
-- wallet), kept by the trigger below in the transaction that changes them:
-- the one place the inbox's counts are read from (the cap on held
-- messages, payd admin sms stats, metrics).
CREATE TABLE sms_message_counts (
    organization_id TEXT COLLATE "C" NOT NULL,
    wallet_id       TEXT COLLATE "C" NOT NULL,
    status          TEXT    NOT NULL,
    count           BIGINT  NOT NULL,
    PRIMARY KEY (organization_id, wallet_id, status)
);

INSERT INTO sms_message_counts (organization_id, wallet_id, status, count)
    SELECT organization_id, wallet_id, status, count(*) FROM sms_messages
    GROUP BY organization_id, wallet_id, status;

CREATE FUNCTION sms_messages_count() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'UPDATE' THEN
        IF OLD.status = NEW.status THEN
            RETURN NULL;
        END IF;
        UPDATE sms_message_counts SET count = count - 1
            WHERE organization_id = OLD.organization_id AND wallet_id = OLD.wallet_id AND status = OLD.status;
    END IF;
    INSERT INTO sms_message_counts (organization_id, wallet_id, status, count)
        VALUES (NEW.organization_id, NEW.wallet_id, NEW.status, 1)
        ON CONFLICT (organization_id, wallet_id, status) DO UPDATE SET count = sms_message_counts.count + 1;
    RETURN NULL;
END;
$$;

CREATE TRIGGER sms_messages_count AFTER INSERT OR UPDATE OF status ON sms_messages
    FOR EACH ROW EXECUTE FUNCTION sms_messages_count();

-- An organization's inbox settings; no row means the defaults
-- (smsinbox.DefaultSettings).
CREATE TABLE sms_settings (
    organization_id    TEXT COLLATE "C" NOT NULL PRIMARY KEY REFERENCES organizations (id),
    -- true: a payout an SMS matched waits for payd admin payout confirm.
    payout_sms_confirm BOOLEAN NOT NULL,
    -- Held messages kept per wallet; the oldest expire beyond it.
    held_max           INTEGER NOT NULL,
    -- Microseconds a message stays held before it expires.
    held_max_age       BIGINT  NOT NULL,
    updated_at         TIMESTAMPTZ NOT NULL
);

-- The message that matched a payout waiting for an operator's
-- confirmation (status 'matched'), or that completed it.
ALTER TABLE manual_payouts ADD COLUMN sms_id TEXT COLLATE "C" NOT NULL DEFAULT '';
