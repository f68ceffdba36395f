-- One payment per hosted checkout form: the card page carries a one-time attempt id, and a second post of
-- the same page (a double click, a browser's resubmit) finds the order the first one made instead of
-- charging again.
ALTER TABLE payments_orders ADD COLUMN checkout_attempt text;
CREATE UNIQUE INDEX payments_orders_checkout_attempt ON payments_orders (site_id, checkout_attempt)
  WHERE checkout_attempt IS NOT NULL;
