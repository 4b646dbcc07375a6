import { defaultFaceBuffer } from '../clients/face-buffer.ts'
import { evaluateDataset } from '../estimator/evaluate-dataset.ts'
import { DEFAULT_FACE_POLICY } from '../liveness/face-policy.ts'
import { jsonOption, type StandaloneCommand } from './command.ts'
import { readCommandLine, UsageError } from './parse.ts'

const usage = 'estimator eval --dataset DIR [--json] [--thresholds 18,21,25] [--buffers 0,3,5,7,10] [--workers N]'

/** `estimator eval --help`: what the evaluation reports. */
const help = `ofage ${usage}

Runs the face age estimator over labelled photos (DIR/labels.csv: "path,age" lines, paths relative to
DIR) and reports its accuracy as the live check would use it. A photo is estimated when the detector finds
exactly one face with score >= the policy's bound; the others are counted apart (noSingleFace).

  --thresholds  ages to decide (default 18,21,25)
  --buffers     a grid of buffers to try at every threshold; without it, each threshold gets the
                live check's default buffer (the policy's rows)
  --workers     estimator worker threads (default FACE_WORKERS)
  --json        one JSON document instead of text

Rates: approved when estimate >= cutoff = threshold + buffer. Each rate is a Proportion
{from, to (null: open-ended), n, count, rate, low, high}: count of n photos of ages from..to, with the
95% Wilson score interval [low, high]; rate, low and high are null when n is 0.

JSON fields:
  mode                  "policy" (default buffers) or "grid" (--buffers)
  minFaceScore          the detector bound used
  samples, estimated, noSingleFace
  mae                   mean absolute error in years over the estimated photos
  bands[]               {label, n, mae} for under 13, 13-17, 18-24, 25-34, 35-54, 55+
  decisions[]           {threshold, buffer, cutoff, falseAccepts, falseRejects}, with (t = threshold)
    falseAccepts.fiveYearsUnder   ages t-5..t-1 approved
    falseAccepts.allUnder         ages under t approved
    falseRejects.allOver          ages t and over refused
    falseRejects.nearThreshold    ages t..t+6 refused
    falseRejects.sevenYearsOver   ages t+7 and over refused
    falseRejects.twelveYearsOver  ages t+12 and over refused
  groups                null unless file names follow UTKFace (age_gender_race_...); else one table per
                        threshold at its default buffer: {threshold, buffer, cutoff, rows[]}, each row
                        {dimension ("all", "gender", "group"), label, n, mae,
                         falseAccepts (ages t-5..t-1), falseRejects (ages t+7 and over)}`

const options = { ...jsonOption, dataset: { type: 'string' }, thresholds: { type: 'string' }, buffers: { type: 'string' }, workers: { type: 'string' } } as const

/**
 * `ofage estimator eval --dataset DIR`: needs no database, so it runs before any is opened. Without --buffers it
 * measures the live check's own policy (each threshold's default buffer, its face-score bound); the
 * estimator is handed those numbers, it does not import the policy.
 */
export const estimator = {
  kind: 'standalone',
  name: 'estimator',
  usage: `${usage}\n${' '.repeat(42)}(estimator eval --help: what it reports)`,
  subcommands: ['eval'],
  options,
  ownHelp: ['eval'],
  async run(argv, { io, config }): Promise<number> {
    let parsed
    try {
      parsed = readCommandLine(estimator, argv)
    } catch (cause) {
      if (!(cause instanceof UsageError)) throw cause
      io.err(`ofage: ${cause.message}\nusage: ofage ${usage}`)
      return 2
    }
    const { flags, words } = parsed
    if (words[0] === 'eval' && flags.help) {
      io.out(help)
      return 0
    }
    if (words[0] !== 'eval' || !flags.dataset) {
      io.err(`ofage: usage: ${usage}`)
      return 2
    }
    const list = (value: string | undefined) => value?.split(',').map((n) => Number(n.trim()))
    const thresholds = list(flags.thresholds) ?? [18, 21, 25]
    const buffers = list(flags.buffers)
    if ([...thresholds, ...(buffers ?? [])].some((n) => !Number.isInteger(n) || n < 0 || n > 120)) {
      io.err('ofage: --thresholds and --buffers take whole numbers separated by commas')
      return 2
    }
    const workers = flags.workers === undefined ? config.face.workers : Number(flags.workers)
    if (!Number.isInteger(workers) || workers < 1 || workers > 64) {
      io.err('ofage: --workers takes a whole number from 1 to 64')
      return 2
    }
    try {
      const { report, text } = await evaluateDataset(
        { dataset: flags.dataset, thresholds, buffers, bufferFor: defaultFaceBuffer, minFaceScore: DEFAULT_FACE_POLICY.minFaceScore, workers },
        (line) => io.err(line),
      )
      io.out(flags.json ? JSON.stringify(report, null, 2) : text)
      return 0
    } catch (cause) {
      io.err(`ofage: ${(cause as Error).message}`)
      return 1
    }
  },
} satisfies StandaloneCommand<typeof options>
