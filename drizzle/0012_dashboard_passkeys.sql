CREATE TABLE "dashboard_passkey_challenges" (
	"challenge_hash" text PRIMARY KEY NOT NULL,
	"expires_at" timestamp (3) with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "dashboard_passkeys" (
	"credential_id" text PRIMARY KEY NOT NULL,
	"user_id" text NOT NULL,
	"public_key" text NOT NULL,
	"sign_count" integer NOT NULL,
	"created_at" timestamp (3) with time zone NOT NULL,
	"last_used_at" timestamp (3) with time zone
);
--> statement-breakpoint
ALTER TABLE "dashboard_passkeys" ADD CONSTRAINT "dashboard_passkeys_user_id_dashboard_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."dashboard_users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "dashboard_passkey_challenges_expires" ON "dashboard_passkey_challenges" USING btree ("expires_at");--> statement-breakpoint
CREATE INDEX "dashboard_passkeys_user" ON "dashboard_passkeys" USING btree ("user_id");