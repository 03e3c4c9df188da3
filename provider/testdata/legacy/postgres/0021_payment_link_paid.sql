-- A payment link is paid by any of its checkouts, not only its latest:
-- paid_deposit_id is the first that was (a succeeded deposit, or a late
-- payment credited to a closed one), written with that success, so that
-- the link's page and its next open read it on the link's own row. A link
-- already paid is found here by its checkouts' merchant_ids, "<link
-- ID>-<n>", whose link ID is 32 characters ("plink_" and 26).
ALTER TABLE payment_links ADD COLUMN paid_deposit_id TEXT COLLATE "C" NOT NULL DEFAULT '';

UPDATE payment_links SET paid_deposit_id = paid.deposit_id
FROM (
    SELECT d.organization_id, substr(d.merchant_id, 1, 32) AS link_id, MIN(d.id) AS deposit_id
    FROM deposits d
    WHERE d.merchant_id LIKE 'plink%' AND substr(d.merchant_id, 33, 1) = '-'
      AND (d.status IN ('succeeded', 'refunded')
           OR EXISTS (SELECT 1 FROM attempts a WHERE a.deposit_id = d.id AND a.status = 'succeeded'))
    GROUP BY d.organization_id, substr(d.merchant_id, 1, 32)
) AS paid
WHERE payment_links.id = paid.link_id AND payment_links.organization_id = paid.organization_id;
