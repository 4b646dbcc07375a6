ALTER TABLE "clients" ADD COLUMN "previous_secret_hash" text;--> statement-breakpoint
ALTER TABLE "clients" ADD COLUMN "previous_secret_expires_at" timestamp (3) with time zone;