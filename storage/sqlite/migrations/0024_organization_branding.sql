-- What payers see of an organization on its payment pages besides its
-- name: a logo (an https URL, shown as an image) and how to reach its
-- support (a phone number, an email address or a URL). Empty: none.
-- disabled_methods are the payment methods the organization turned off,
-- comma-separated in catalog order ('' for none).
ALTER TABLE organizations ADD COLUMN logo_url TEXT NOT NULL DEFAULT '';
ALTER TABLE organizations ADD COLUMN support_contact TEXT NOT NULL DEFAULT '';
ALTER TABLE organizations ADD COLUMN disabled_methods TEXT NOT NULL DEFAULT '';
