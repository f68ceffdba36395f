-- What a site's or store's hosted pages show of it: a display name, a logo (an https URL) and a colour
-- (#RRGGBB). Empty: the pages show the site's or store's name in Tessera's colours.
ALTER TABLE sites ADD COLUMN brand jsonb NOT NULL DEFAULT '{}';
ALTER TABLE stores ADD COLUMN brand jsonb NOT NULL DEFAULT '{}';
