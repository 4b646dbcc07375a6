ALTER TABLE "dashboard_passkeys" ADD COLUMN "added_device" text;--> statement-breakpoint
ALTER TABLE "dashboard_passkeys" ADD COLUMN "added_network" text;