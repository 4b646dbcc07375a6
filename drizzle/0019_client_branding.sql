CREATE TABLE "client_logos" (
	"client_id" text PRIMARY KEY NOT NULL,
	"png" "bytea" NOT NULL,
	"sha256" text NOT NULL,
	"width" integer NOT NULL,
	"height" integer NOT NULL,
	"created_at" timestamp (3) with time zone NOT NULL,
	CONSTRAINT "client_logos_bounds" CHECK ("client_logos"."width" between 1 and 1024 and "client_logos"."height" between 1 and 256 and octet_length("client_logos"."png") <= 1048576)
);
--> statement-breakpoint
ALTER TABLE "clients" ADD COLUMN "display_name" text;--> statement-breakpoint
ALTER TABLE "clients" ADD COLUMN "accent_colour" text;--> statement-breakpoint
ALTER TABLE "clients" ADD COLUMN "privacy_url" text;--> statement-breakpoint
ALTER TABLE "client_logos" ADD CONSTRAINT "client_logos_client_id_clients_id_fk" FOREIGN KEY ("client_id") REFERENCES "public"."clients"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "clients" ADD CONSTRAINT "clients_display_name_length" CHECK ("clients"."display_name" is null or char_length("clients"."display_name") between 1 and 80);--> statement-breakpoint
ALTER TABLE "clients" ADD CONSTRAINT "clients_accent_colour_shape" CHECK ("clients"."accent_colour" is null or "clients"."accent_colour" ~ '^#[0-9a-f]{6}$');