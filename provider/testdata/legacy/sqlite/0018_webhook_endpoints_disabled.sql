-- The disabled webhook endpoints, for the metric that counts them at each
-- scrape (CountDisabledWebhookEndpoints): a partial index holds only them.
CREATE INDEX webhook_endpoints_disabled ON webhook_endpoints (organization_id) WHERE enabled = 0;
