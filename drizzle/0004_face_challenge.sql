ALTER TABLE "verification_sessions" ADD COLUMN "challenge_hash" text;--> statement-breakpoint
ALTER TABLE "verification_sessions" ADD COLUMN "challenge_turns" text;--> statement-breakpoint
ALTER TABLE "verification_sessions" ADD COLUMN "challenge_expires_at" timestamp (3) with time zone;--> statement-breakpoint
ALTER TABLE "verification_sessions" ADD COLUMN "closed_methods" text[] DEFAULT '{}'::text[] NOT NULL;