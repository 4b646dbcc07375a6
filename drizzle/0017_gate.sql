CREATE TABLE "gate_hosts" (
	"origin" text PRIMARY KEY NOT NULL,
	"client_id" text NOT NULL,
	"created_at" timestamp (3) with time zone NOT NULL
);
--> statement-breakpoint
ALTER TABLE "clients" ADD COLUMN "gate_age" integer;--> statement-breakpoint
ALTER TABLE "clients" ADD COLUMN "gate_ttl_seconds" integer DEFAULT 2592000 NOT NULL;--> statement-breakpoint
ALTER TABLE "gate_hosts" ADD CONSTRAINT "gate_hosts_client_id_clients_id_fk" FOREIGN KEY ("client_id") REFERENCES "public"."clients"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "gate_hosts_client" ON "gate_hosts" USING btree ("client_id");--> statement-breakpoint
ALTER TABLE "clients" ADD CONSTRAINT "clients_gate_age_range" CHECK ("clients"."gate_age" is null or "clients"."gate_age" between 1 and 99);--> statement-breakpoint
ALTER TABLE "clients" ADD CONSTRAINT "clients_gate_ttl_range" CHECK ("clients"."gate_ttl_seconds" between 60 and 34560000);--> statement-breakpoint
-- Every change a gate's answer depends on (a client's status, ages, lifetime; its hosts) is announced on
-- ofage_gate when it commits, whichever way it was made (CLI, dashboard, a deletion): each instance's gate
-- directory reads its hosts again (src/gate/gate-directory.ts).
CREATE FUNCTION "ofage_gate_changed"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('ofage_gate', 'changed');
  RETURN NULL;
END
$$;--> statement-breakpoint
CREATE TRIGGER "clients_gate_changed" AFTER INSERT OR UPDATE OR DELETE ON "clients" FOR EACH STATEMENT EXECUTE FUNCTION "ofage_gate_changed"();--> statement-breakpoint
CREATE TRIGGER "gate_hosts_changed" AFTER INSERT OR UPDATE OR DELETE ON "gate_hosts" FOR EACH STATEMENT EXECUTE FUNCTION "ofage_gate_changed"();
