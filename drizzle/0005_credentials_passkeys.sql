CREATE TABLE "credential_requests" (
	"id_hash" text PRIMARY KEY NOT NULL,
	"state_hash" text NOT NULL,
	"session_id_hash" text NOT NULL,
	"nonce" text NOT NULL,
	"created_at" timestamp (3) with time zone NOT NULL,
	"expires_at" timestamp (3) with time zone NOT NULL,
	"answered_at" timestamp (3) with time zone,
	"outcome" text,
	"failure" text,
	"age_over" integer,
	"used_at" timestamp (3) with time zone,
	CONSTRAINT "credential_requests_state_hash_unique" UNIQUE("state_hash")
);
--> statement-breakpoint
CREATE TABLE "passkeys" (
	"credential_id" text PRIMARY KEY NOT NULL,
	"public_key" text NOT NULL,
	"sign_count" integer DEFAULT 0 NOT NULL,
	"age_over" integer NOT NULL,
	"method_class" text NOT NULL,
	"sandbox" boolean NOT NULL,
	"proven_at" timestamp (3) with time zone NOT NULL,
	"expires_at" timestamp (3) with time zone NOT NULL
);
--> statement-breakpoint
ALTER TABLE "verification_sessions" ADD COLUMN "passkey_challenge_hash" text;--> statement-breakpoint
ALTER TABLE "verification_sessions" ADD COLUMN "passkey_challenge_expires_at" timestamp (3) with time zone;--> statement-breakpoint
ALTER TABLE "credential_requests" ADD CONSTRAINT "credential_requests_session_id_hash_verification_sessions_id_hash_fk" FOREIGN KEY ("session_id_hash") REFERENCES "public"."verification_sessions"("id_hash") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "credential_requests_session" ON "credential_requests" USING btree ("session_id_hash");