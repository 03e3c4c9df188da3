-- The console shows an organization's UddoktaPay IPNs, newest first, beside
-- its webhook deliveries: one index range, whatever the other
-- organizations' IPNs.
CREATE INDEX compat_ipns_organization_created ON compat_ipns (organization_id, created_at, link_id);
