-- The refunds sent through bKash's refund operation. bKash keeps no key of
-- the merchant's for a refund, and its refund status lists a payment's
-- refunds by bKash's own refundTrxId only: so each refund is recorded here
-- before it is sent (state sending), at most one per payment at a time
-- (bkash_refunds_sending), and a refund whose answer was lost is the one
-- listed refund of its payment that no row names yet.
-- state: sending, made (refund_trx_id set), refused (reason says why);
-- sent_at: when it was last sent (a refund not listed is sent again only
-- once bKash has had time to list it).
CREATE TABLE bkash_refunds (
    refund_id       TEXT    NOT NULL PRIMARY KEY,
    organization_id TEXT    NOT NULL,
    payment_id      TEXT    NOT NULL,
    amount          TEXT    NOT NULL,
    state           TEXT    NOT NULL,
    refund_trx_id   TEXT    NOT NULL,
    reason          TEXT    NOT NULL,
    sent_at         INTEGER NOT NULL
) STRICT;

CREATE UNIQUE INDEX bkash_refunds_sending ON bkash_refunds (payment_id) WHERE state = 'sending';
CREATE UNIQUE INDEX bkash_refunds_trx ON bkash_refunds (payment_id, refund_trx_id) WHERE refund_trx_id <> '';
