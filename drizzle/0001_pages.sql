CREATE TABLE "age_passes" (
	"id" uuid PRIMARY KEY NOT NULL,
	"age_over" integer NOT NULL,
	"method_class" text NOT NULL,
	"sandbox" boolean NOT NULL,
	"created_at" timestamp (3) with time zone NOT NULL,
	"expires_at" timestamp (3) with time zone NOT NULL,
	"revoked_at" timestamp (3) with time zone
);
--> statement-breakpoint
CREATE TABLE "verification_sessions" (
	"id_hash" text PRIMARY KEY NOT NULL,
	"browser_hash" text NOT NULL,
	"csrf_token" text NOT NULL,
	"client_id" text NOT NULL,
	"redirect_uri" text NOT NULL,
	"state" text,
	"age_required" integer NOT NULL,
	"failed_attempts" integer DEFAULT 0 NOT NULL,
	"created_at" timestamp (3) with time zone NOT NULL,
	"expires_at" timestamp (3) with time zone NOT NULL,
	"completed_at" timestamp (3) with time zone
);
--> statement-breakpoint
ALTER TABLE "verification_sessions" ADD CONSTRAINT "verification_sessions_client_id_clients_id_fk" FOREIGN KEY ("client_id") REFERENCES "public"."clients"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "verification_sessions_expires" ON "verification_sessions" USING btree ("expires_at");