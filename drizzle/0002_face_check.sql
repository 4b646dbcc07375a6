ALTER TABLE "audit_logs" ADD COLUMN "method" text;--> statement-breakpoint
ALTER TABLE "audit_logs" ADD COLUMN "age_buffer" integer;--> statement-breakpoint
ALTER TABLE "clients" ADD COLUMN "face_buffer" integer;--> statement-breakpoint
ALTER TABLE "clients" ADD CONSTRAINT "clients_face_buffer_range" CHECK ("clients"."face_buffer" is null or "clients"."face_buffer" between 0 and 30);