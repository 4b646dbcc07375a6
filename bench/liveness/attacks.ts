import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import jpeg from 'jpeg-js'
import type { FrameAnalysis, Landmarks } from '../../src/estimator/types.ts'
import { turnOf } from '../../src/liveness/turn.ts'
import { LIVENESS_DIR } from '../../test/liveness/clips.ts'
import type { Camera, Challenge, Picture, Pose, cachedAnalyser } from './simulate.ts'

/**
 * The attacks on the live face check, each a camera an attacker can build (shared/liveness's clips:
 * their README.md has sources and licences; nothing of them is copied into the repository), and one
 * genuine capture that must pass or the suite proves nothing.
 */
export type Attack = {
  name: string
  /** One line for the table: what the attacker does. */
  summary: string
  /** Only challenges made of these poses (an attacker that can answer just these; the genuine capture). */
  posesOnly?: Pose[]
  /** What the check should do: refuse it, or (the honest limit, and the genuine capture) let it pass. */
  expected: 'refused' | 'passes'
  /** The camera for one attempt at `challenge`. */
  camera(random: () => number, challenge: Challenge): Camera
}

type Analyser = ReturnType<typeof cachedAnalyser>
type Clip = { name: string; fps: number; pictures: Picture[] }

const CLIP_FPS = 12

function loadClip(name: string): Clip {
  const dir = join(LIVENESS_DIR, name, 'frames')
  const files = readdirSync(dir).filter((file) => file.endsWith('.jpg')).sort()
  return { name, fps: CLIP_FPS, pictures: files.map((file) => ({ key: `${name}/${file}`, jpeg: () => new Uint8Array(readFileSync(join(dir, file))) })) }
}

/** A clip looping from `startMs` at `speed`, as a screen or a virtual camera plays it. */
const playing = (clip: Clip, startMs: number, speed: number): Camera => (ms) => clip.pictures[Math.floor(((startMs + ms * speed) / 1000) * clip.fps) % clip.pictures.length]!

type Rgba = { width: number; height: number; data: Uint8Array }
const decode = (bytes: Uint8Array): Rgba => jpeg.decode(bytes, { useTArray: true })
const encode = (image: Rgba) => new Uint8Array(jpeg.encode(image, 90).data)

function sample(image: Rgba, x: number, y: number, channel: number): number {
  const x0 = Math.max(0, Math.min(image.width - 2, Math.floor(x)))
  const y0 = Math.max(0, Math.min(image.height - 2, Math.floor(y)))
  const fx = Math.max(0, Math.min(1, x - x0))
  const fy = Math.max(0, Math.min(1, y - y0))
  const at = (xx: number, yy: number) => image.data[(yy * image.width + xx) * 4 + channel]!
  return (at(x0, y0) * (1 - fx) + at(x0 + 1, y0) * fx) * (1 - fy) + (at(x0, y0 + 1) * (1 - fx) + at(x0 + 1, y0 + 1) * fx) * fy
}

/**
 * A frame as a camera films it off a screen: the picture shrunk into a black bezel on a dim wall,
 * softened (the camera focuses on a grid of pixels), with the screen's raised black level and gamma, and
 * the moiré of the camera's sensor beating against the screen's pixel grid.
 */
export function filmedOffScreen(bytes: Uint8Array): Uint8Array {
  const source = decode(bytes)
  const { width, height } = source
  const out = new Uint8Array(width * height * 4)
  const scale = 0.82
  const screenW = width * scale
  const screenH = height * scale
  const left = (width - screenW) / 2
  const top = (height - screenH) / 2
  const bezel = 12
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const i = (y * width + x) * 4
      out[i + 3] = 255
      const inScreen = x >= left && x < left + screenW && y >= top && y < top + screenH
      const inBezel = x >= left - bezel && x < left + screenW + bezel && y >= top - bezel && y < top + screenH + bezel
      if (!inScreen) {
        out.fill(inBezel ? 12 : 96, i, i + 3)
        continue
      }
      const sx = (x - left) / scale
      const sy = (y - top) / scale
      const moire = 1 + 0.06 * Math.sin(2 * Math.PI * (0.21 * x + 0.06 * y))
      for (let c = 0; c < 3; c++) {
        // Four samples 0.8 px apart: the slight blur of a camera focused on a screen.
        const value = (sample(source, sx - 0.8, sy, c) + sample(source, sx + 0.8, sy, c) + sample(source, sx, sy - 0.8, c) + sample(source, sx, sy + 0.8, c)) / 4
        out[i + c] = Math.max(0, Math.min(255, (18 + 0.86 * 255 * (value / 255) ** 1.15) * moire))
      }
    }
  }
  return encode({ width, height, data: out })
}

/**
 * The ~20 lines of canvas: one photo, the middle of the face slid by `shift` pixels under a smooth
 * elliptical Gaussian (`radius`: its widths across and along), so that the nose moves across the eye
 * line while the face's outline stays, and the whole picture moved by `jitter` pixels, so that no two
 * frames are the same picture. Tried on the clips' photos, a bump 0.6 eye distances wide and 1.0 tall
 * slid 0.9 eye distances is what moves the mesh's nose farthest from the eyes' midpoint (past today's
 * turn threshold); a round bump on the nose alone barely moves it, the mesh's face prior holds.
 */
export function warpedPhoto(photo: Rgba, nose: [number, number], shift: [number, number], radius: [number, number], jitter: [number, number]): Uint8Array {
  const { width, height } = photo
  const out = new Uint8Array(width * height * 4)
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const across = (x - nose[0] - shift[0] - jitter[0]) / radius[0]
      const along = (y - nose[1] - shift[1] - jitter[1]) / radius[1]
      const weight = Math.exp(-(across * across + along * along) / 2)
      const sx = x - jitter[0] - shift[0] * weight
      const sy = y - jitter[1] - shift[1] * weight
      const i = (y * width + x) * 4
      for (let c = 0; c < 3; c++) out[i + c] = sample(photo, sx, sy, c)
      out[i + 3] = 255
    }
  }
  return encode({ width, height, data: out })
}

/** How far a frame's head is turned toward `pose` by the attacker's reckoning (the mesh's own landmarks). */
function towards(pose: Pose, turn: number): number {
  if (pose === 'left') return turn
  if (pose === 'right') return -turn
  // Up and down: the clips have no recording of either; the nearest the attacker has is a frontal one.
  return -Math.abs(turn)
}

const landmarksOf = (analysis: FrameAnalysis): Landmarks | undefined => analysis.faces[0]?.landmarks

/**
 * intel-female-headturn plays the GIF held, backwards, then forwards: frames 7-29 are its distinct
 * pictures (frame 30 + k repeats 29 - k), and a real camera never sends the same picture twice.
 */
const FEMALE_DISTINCT = (_: Picture, index: number) => index >= 6 && index <= 28

/** The attacks, built on analyses of the clips' frames (the attacker's own pose labels) from `analyser`. */
export async function buildAttacks(analyser: Analyser): Promise<Attack[]> {
  const female = loadClip('intel-female-headturn')
  const headtrackr = loadClip('headtrackr-capture4-sideways')
  const waved = loadClip('spoof-gracehopper-waved')
  const still = loadClip('spoof-gracehopper-still').pictures[0]!
  const onScreen = (clip: Clip): Clip => ({
    ...clip,
    name: `${clip.name} on a screen`,
    pictures: clip.pictures.map((picture) => ({ key: `screen/${picture.key}`, jpeg: async () => filmedOffScreen(await picture.jpeg()) })),
  })
  const screens = [onScreen(female), onScreen(headtrackr)]

  // The attacker labels each distinct recorded frame with how far it turns (a landmark tool of its own; ours here).
  const recorded = await Promise.all(
    female.pictures.filter(FEMALE_DISTINCT).map(async (picture, order) => {
      const landmarks = landmarksOf(await analyser.analyse(picture, 'original'))
      return { picture, order, turn: landmarks ? turnOf(landmarks) : Number.NaN }
    }),
  )
  const labelled = recorded.filter((frame) => Number.isFinite(frame.turn))
  const ranked = (pose: Pose) => [...labelled].sort((a, b) => towards(pose, b.turn) - towards(pose, a.turn))

  /**
   * Shows, under each prompt, one of the two recorded frames nearest the prompted pose. Showing a picture
   * again costs it nothing: its virtual camera adds noise, as a real camera's sensor does.
   */
  const puppet = (random: () => number): Camera => (_, prompt) => ranked(prompt.pose)[Math.floor(random() * 2)]!.picture

  /**
   * A real capture: under each prompt, her two frames nearest that pose in the order she made them. The
   * clip has only four frames within 10° of frontal, so each look straight shows the best two again, as
   * a person looking straight twice would.
   */
  const genuine = (): Camera => {
    let phase = -1
    let run: typeof labelled = []
    return (_, prompt) => {
      if (prompt.phase !== phase) {
        phase = prompt.phase
        run = ranked(prompt.pose)
          .slice(0, 2)
          .sort((a, b) => a.order - b.order)
      }
      return (run.shift() ?? ranked(prompt.pose)[0]!).picture
    }
  }

  const photo = decode(await still.jpeg())
  const photoLandmarks = landmarksOf(await analyser.analyse(still, 'original'))
  if (!photoLandmarks) throw new Error('the still photo shows no face to warp')
  const eyes = Math.hypot(photoLandmarks.leftEye[0] - photoLandmarks.rightEye[0], photoLandmarks.leftEye[1] - photoLandmarks.rightEye[1])
  /** Slides the photo's nose toward the prompted pose by `strength` eye distances (unmirrored: her left is the picture's right). */
  const warp = (strength: number): Camera => {
    let frame = 0
    return (_, prompt) => {
      const step = strength * eyes
      const shift: [number, number] = { straight: [0, 0], left: [step, 0], right: [-step, 0], up: [0, -step], down: [0, step] }[prompt.pose] as [number, number]
      const jitter: [number, number] = [frame % 3, Math.floor(frame / 3) % 3]
      const key = `warp/${strength}/${prompt.pose}/${jitter.join(',')}`
      frame++
      // The bump is tall for a sideways slide and wide for an upward or downward one.
      const radius: [number, number] = prompt.pose === 'up' || prompt.pose === 'down' ? [1.0 * eyes, 0.6 * eyes] : [0.6 * eyes, 1.0 * eyes]
      return { key, jpeg: () => warpedPhoto(photo, photoLandmarks.nose, shift, radius, jitter) }
    }
  }

  const durationMs = (clip: Clip) => (clip.pictures.length / clip.fps) * 1000
  const replays = (kind: 'screen' | 'blind'): Attack[] =>
    (kind === 'screen' ? screens : [female, headtrackr]).map((clip) => ({
      name: `${kind}-replay/${clip.name.split('-')[0]}`,
      summary:
        kind === 'screen'
          ? `${clip.name.replace(' on a screen', '')} shown on a screen (bezel, blur, gamma, moiré), from a random start`
          : `${clip.name} played into a virtual camera from a random start at a random speed (0.8-1.25×), blind to the prompts`,
      expected: 'refused' as const,
      camera: (random: () => number) => playing(clip, random() * durationMs(clip), kind === 'screen' ? 1 : 0.8 + 0.45 * random()),
    }))

  return [
    { name: 'still', summary: 'one still photo (spoof-gracehopper-still) on every frame', expected: 'refused', camera: () => () => still },
    {
      name: 'waved',
      summary: 'spoof-gracehopper-waved: the photo as a print moved and rotated, from a random start',
      expected: 'refused',
      camera: (random) => playing(waved, random() * durationMs(waved), 1),
    },
    ...replays('screen'),
    ...replays('blind'),
    {
      name: 'blind-replay-aligned/intel',
      summary: 'the same, started so that one of her straightest frames plays 1 s into the check (an attacker who times the start)',
      expected: 'refused',
      camera: (random) => {
        const speed = 0.8 + 0.45 * random()
        const frontal = ranked('straight')[Math.floor(random() * 2)]!.picture
        const at = (female.pictures.indexOf(frontal) / female.fps) * 1000
        return playing(female, at - 1000 * speed + durationMs(female), speed)
      },
    },
    {
      name: 'puppet',
      summary: 'reads each prompt and shows recorded frames of that pose (the clip has left, right and frontal; the nearest for up and down)',
      expected: 'refused',
      camera: (random) => puppet(random),
    },
    {
      name: 'puppet-has-every-pose',
      summary: 'the same, on challenges of left, right and straight only: it has every pose asked for',
      posesOnly: ['straight', 'left', 'right'],
      expected: 'passes',
      camera: (random) => puppet(random),
    },
    ...[0.7, 0.9, 1.1].map(
      (strength): Attack => ({
        name: `warp-${strength}`,
        summary: `one frontal photo (spoof-gracehopper-still), the middle of the face slid ${strength} eye distances toward each prompted pose`,
        expected: 'refused',
        camera: () => warp(strength),
      }),
    ),
    {
      name: 'genuine',
      summary: 'a real capture (intel-female-headturn) answering challenges of left, right and straight, her frames in order',
      posesOnly: ['straight', 'left', 'right'],
      expected: 'passes',
      camera: () => genuine(),
    },
  ]
}
