-- A business profile's documents (docs/compliance.md, Onboarding): the registry extract, proof of address,
-- the ownership structure, identity documents — PDF, PNG or JPEG read from their bytes, at most 5 MB each,
-- kept encrypted (the key bound to the tenant), at most 50 a profile. Kept while the profile is: KYB
-- records are kept for years after the relationship ends, and the profile's row is the record.
CREATE TABLE business_profile_documents (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  tenant text NOT NULL REFERENCES business_profiles (tenant),
  kind text NOT NULL CHECK (
    kind IN ('registration_extract', 'proof_of_address', 'ownership_structure', 'identity_document', 'other')
  ),
  filename text NOT NULL,
  content_type text NOT NULL,
  bytes integer NOT NULL,
  sha256 text NOT NULL,
  content_enc text NOT NULL,
  uploaded_by text NOT NULL,
  uploaded_at timestamptz NOT NULL
);
CREATE INDEX business_profile_documents_tenant ON business_profile_documents (tenant, id);
