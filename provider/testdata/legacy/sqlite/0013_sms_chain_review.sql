-- The SMS inbox's balance chain heals itself and the operator reviews it,
-- so that one lost message does not stall a wallet: a run of held
-- messages consistent among themselves re-synchronizes the chain over a gap, recorded in sms_gaps and counted
-- per wallet; the operator approves or rejects a held message, or pastes
-- one the phone missed. Conventions as in 0001-0007.

-- Held messages in a consistent run that re-synchronize a chain (0: never),
-- and how long (microseconds) the wallet's chain must have stayed silent
-- since the run's first message: a real message in that time is accepted
-- and contradicts the run (smsinbox.DefaultSettings).
ALTER TABLE sms_settings ADD COLUMN resync_after INTEGER NOT NULL DEFAULT 3;
ALTER TABLE sms_settings ADD COLUMN resync_quiet INTEGER NOT NULL DEFAULT 600000000;

-- How many gaps the chain was moved over (re-synchronized, or a message
-- the operator approved that did not follow), kept with every gap.
ALTER TABLE sms_wallets ADD COLUMN gaps INTEGER NOT NULL DEFAULT 0;

-- Who pasted the message ('' for a device's), who approved or rejected it,
-- and the gap whose re-synchronization accepted it.
ALTER TABLE sms_messages ADD COLUMN pasted_by TEXT NOT NULL DEFAULT '';
ALTER TABLE sms_messages ADD COLUMN reviewed_by TEXT NOT NULL DEFAULT '';
ALTER TABLE sms_messages ADD COLUMN gap_id TEXT NOT NULL DEFAULT '';

-- A gap a chain was moved over: from the balance it knew to the balance
-- before the first message after the gap; amount is their difference (what
-- the missed messages moved), messages how many messages the move accepted.
CREATE TABLE sms_gaps (
    id               TEXT    NOT NULL PRIMARY KEY,
    organization_id  TEXT    NOT NULL REFERENCES organizations (id),
    wallet_id        TEXT    NOT NULL,
    from_balance     TEXT    NOT NULL,
    from_message_id  TEXT    NOT NULL,
    to_balance       TEXT    NOT NULL,
    amount           TEXT    NOT NULL,
    first_message_id TEXT    NOT NULL,
    last_message_id  TEXT    NOT NULL,
    messages         INTEGER NOT NULL,
    actor            TEXT    NOT NULL,
    created_at       INTEGER NOT NULL
) STRICT;

-- payd admin sms gaps: newest first.
CREATE INDEX sms_gaps_organization ON sms_gaps (organization_id, created_at, id);

-- A run that continues a message held before the chain last moved began
-- before a real message that contradicts it: found by the balance.
CREATE INDEX sms_messages_held_balance ON sms_messages (wallet_id, balance) WHERE status = 'held';
