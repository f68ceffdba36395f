-- Console roles (docs/console.md, Roles): what a person may do, beside whom they see (`role`: an operator
-- sees every tenant, a member one). A member is a viewer (reads, personal and card data masked beyond
-- what lists show), a developer (keys, webhooks, events), finance (refunds, captures, payouts, reports)
-- or an admin (everything of the tenant); an operator is an operator or an operator-viewer (reads only).
-- People from before roles could do everything: members become admins, operators stay operators.
ALTER TABLE console_users ADD COLUMN access text;
UPDATE console_users SET access = CASE role WHEN 'operator' THEN 'operator' ELSE 'admin' END;
ALTER TABLE console_users
  ALTER COLUMN access SET NOT NULL,
  ADD CONSTRAINT console_users_access CHECK (
    access IN ('operator', 'operator-viewer', 'viewer', 'developer', 'finance', 'admin')
  ),
  ADD CONSTRAINT console_users_access_scope CHECK (
    (role = 'operator') = (access IN ('operator', 'operator-viewer'))
  );
