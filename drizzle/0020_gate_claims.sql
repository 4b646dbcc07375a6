-- A gated origin may be claimed by several clients (issue 30): a claim alone opens nothing, the proxy's own
-- configuration names the client that answers (src/gate/gate-match.ts). One row per client and origin.
ALTER TABLE "gate_hosts" DROP CONSTRAINT "gate_hosts_pkey";--> statement-breakpoint
ALTER TABLE "gate_hosts" ADD CONSTRAINT "gate_hosts_origin_client_id_pk" PRIMARY KEY("origin","client_id");
