-- A real chain replaces blocks now and then (a reorg): a transfer seen in a replaced block is
-- `reverted` until a block includes it again (each inclusion holds its value anew in the ledger).
ALTER TABLE crypto_deposits DROP CONSTRAINT crypto_deposits_status_check;
ALTER TABLE crypto_deposits ADD CONSTRAINT crypto_deposits_status_check
  CHECK (status IN ('detected', 'confirmed', 'reverted'));
ALTER TABLE crypto_deposits ADD COLUMN inclusions integer NOT NULL DEFAULT 1;
-- The chain simulator models a reorg too (POST /sandbox/crypto/transfers/{hash}/reorg).
ALTER TABLE chain_transfers DROP CONSTRAINT chain_transfers_status_check;
ALTER TABLE chain_transfers ADD CONSTRAINT chain_transfers_status_check
  CHECK (status IN ('pending', 'confirmed', 'reverted'));

-- The transfer a crypto top-up waits on, so its confirmations can be asked of the chain.
ALTER TABLE issuing_topups ADD COLUMN transfer_id text;

-- A store's own wallet on the EVM chain: an account-level extended public key (m/44'/60'/0').
ALTER TABLE stores ADD COLUMN evm_account_key text;

-- The EVM chain adapter (rails/chain/evm/). Extended public keys addresses are derived from, each with
-- the next unused index: an index is taken in the transaction that hands its address out, never reused.
CREATE TABLE evm_account_keys (
  account_key text PRIMARY KEY,
  next_index integer NOT NULL DEFAULT 0
);

CREATE TABLE evm_addresses (
  -- lower case, as logs and transactions are matched
  address text PRIMARY KEY,
  network text NOT NULL,
  asset text NOT NULL,
  reference text NOT NULL,
  account_key text NOT NULL REFERENCES evm_account_keys (account_key),
  derivation_index integer NOT NULL,
  created_at timestamptz NOT NULL,
  UNIQUE (reference, network, asset),
  UNIQUE (account_key, derivation_index)
);

-- Where the scanner stands on each network, and the chain id it was first served (a different one
-- later is a misconfiguration, refused). `problem`: why the scanner is stopped (readiness reports it).
CREATE TABLE evm_scan_state (
  network text PRIMARY KEY,
  chain_id bigint NOT NULL,
  block_number bigint NOT NULL,
  block_hash text NOT NULL,
  problem text,
  checked_at timestamptz NOT NULL
);

-- The recent blocks the scanner processed, to find where a reorg forked.
CREATE TABLE evm_blocks (
  network text NOT NULL,
  number bigint NOT NULL,
  hash text NOT NULL,
  parent_hash text NOT NULL,
  PRIMARY KEY (network, number)
);

-- Transfers to deposit addresses (in) and payouts from the hot wallet (out).
--   in:  pending (in a block, confirming) -> confirmed; pending -> reverted (reorg) -> pending
--   out: queued (to sign) -> broadcast (signed, hash recorded before it is sent) -> pending (mined) ->
--        confirmed; a reorg returns a mined payout to broadcast; failed: mined but reverted by the EVM
CREATE TABLE evm_transfers (
  id text PRIMARY KEY,
  network text NOT NULL,
  asset text NOT NULL,
  direction text NOT NULL CHECK (direction IN ('in', 'out')),
  address text NOT NULL,
  amount numeric(78, 0) NOT NULL CHECK (amount > 0),
  reference text NOT NULL,
  status text NOT NULL CHECK (status IN ('queued', 'broadcast', 'pending', 'confirmed', 'reverted', 'failed')),
  confirmations_required integer NOT NULL,
  -- the transaction (for a payout: the one mined, or the latest signed) and where it was mined
  tx_hash text,
  block_number bigint,
  block_hash text,
  -- payouts: the nonce, every signed replacement (hash, raw, fees), when it was last (re)broadcast
  nonce bigint,
  attempts jsonb NOT NULL DEFAULT '[]',
  last_broadcast_at timestamptz,
  last_error text,
  created_at timestamptz NOT NULL,
  confirmed_at timestamptz
);
CREATE INDEX evm_transfers_open ON evm_transfers (network, status) WHERE status <> 'confirmed';
CREATE INDEX evm_transfers_block ON evm_transfers (network, block_number);
CREATE UNIQUE INDEX evm_transfers_payout ON evm_transfers (reference) WHERE direction = 'out';

-- The hot wallet's next nonce per network, taken when a payout is signed.
CREATE TABLE evm_nonces (
  network text NOT NULL,
  sender text NOT NULL,
  next_nonce bigint NOT NULL,
  PRIMARY KEY (network, sender)
);
