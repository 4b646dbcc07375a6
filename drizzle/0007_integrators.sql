CREATE TABLE "pushed_requests" (
	"reference_hash" text PRIMARY KEY NOT NULL,
	"client_id" text NOT NULL,
	"redirect_uri" text NOT NULL,
	"state" text,
	"age_required" integer NOT NULL,
	"code_challenge" text,
	"created_at" timestamp (3) with time zone NOT NULL,
	"expires_at" timestamp (3) with time zone NOT NULL
);
--> statement-breakpoint
ALTER TABLE "auth_codes" ADD COLUMN "code_challenge" text;--> statement-breakpoint
ALTER TABLE "clients" ADD COLUMN "require_pkce" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "clients" ADD COLUMN "require_pushed_requests" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "verification_sessions" ADD COLUMN "code_challenge" text;--> statement-breakpoint
ALTER TABLE "pushed_requests" ADD CONSTRAINT "pushed_requests_client_id_clients_id_fk" FOREIGN KEY ("client_id") REFERENCES "public"."clients"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "pushed_requests_expires" ON "pushed_requests" USING btree ("expires_at");