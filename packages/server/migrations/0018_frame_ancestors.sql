-- The origins allowed to embed a site's or a store's hosted pages (its checkout, its crypto payment page)
-- in a frame; empty: no one (frame-ancestors 'none').
ALTER TABLE sites ADD COLUMN frame_ancestors text[] NOT NULL DEFAULT '{}';
ALTER TABLE stores ADD COLUMN frame_ancestors text[] NOT NULL DEFAULT '{}';
