import { z } from 'zod'

/**
 * Descriptions of visual assets by a vision model (`tychora describe`). A description is derived
 * evidence: what a model said a picture shows, kept beside the picture with the model, the
 * fingerprint of its prompt, when, and whether a person reviewed it. It is never a unit, never in
 * a search result's text, and never cited as the source's words.
 */
export const DescriptionEntrySchema = z.object({
  id: z.number().int().positive(),
  sha256: z.string().describe('The visual asset described'),
  sent_sha256: z.string().describe('The bytes uploaded: the asset itself, or its PNG re-encoding'),
  sent_media_type: z.string(),
  provider: z.string(),
  model: z.string().describe('The model, as the provider reported it'),
  prompt_fingerprint: z.string().describe('sha256 of the instructions, the model asked for and max_tokens'),
  text: z.string(),
  stop_reason: z.string().nullable().describe('end_turn, or max_tokens when the description was cut short'),
  input_tokens: z.number().int().nonnegative(),
  output_tokens: z.number().int().nonnegative(),
  created_at: z.number().int().describe('ms since the epoch'),
  review_status: z.enum(['unreviewed', 'accepted', 'rejected']),
  reviewed_at: z.number().int().nullable(),
  review_note: z.string().nullable(),
})

export type DescriptionEntry = z.infer<typeof DescriptionEntrySchema>

/** A picture checked for upload, as the core hands it to the provider call. */
export const DescriptionSubjectSchema = z.object({
  sha256: z.string(),
  media_type: z.string(),
  path: z.string().describe('The file that is or holds it, relative to its root'),
  page: z.number().int().nullable(),
  collections: z.array(z.string()).describe('Every collection holding it; each permits upload'),
  alt_text: z.string().nullable(),
  caption: z.string().nullable(),
  upload_media_type: z.string(),
  upload_sha256: z.string(),
  upload: z.custom<Uint8Array>((v) => v instanceof Uint8Array, 'bytes'),
  provider: z.string(),
  model: z.string(),
  max_tokens: z.number().int().positive(),
})

export type DescriptionSubject = z.infer<typeof DescriptionSubjectSchema>

/** `describe asset`: the stored description, or with `dry_run` what would be sent. */
export const DescribeReportSchema = z.object({
  asset: z.string(),
  path: z.string(),
  collections: z.array(z.string()),
  sent: z.object({ media_type: z.string(), bytes: z.number().int(), sha256: z.string() }),
  prompt_fingerprint: z.string(),
  dry_run: z.boolean(),
  description: DescriptionEntrySchema.nullable(),
})

export type DescribeReport = z.infer<typeof DescribeReportSchema>
