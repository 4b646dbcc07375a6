import type { ErrorCode, ErrorHint } from '../errors.ts'
import type { CredentialFailure } from '../credentials/presentation.ts'
import type { PasskeyFailure } from '../passkeys/model.ts'
import type { FaceFailure } from '../verification/methods/face-policy.ts'

/** The face check's words: the page's script reads the short ones from a data attribute. */
export type FaceMessages = {
  title: string
  intro: string
  privacy: string
  startCamera: string
  preview: string
  capture: string
  upload: string
  starting: string
  ready: string
  checking: string
  cameraUnavailable: string
  /** No camera and no upload: the visitor needs another way. */
  cameraNeeded: (site: string) => string
  /** The margin, said before the camera starts: the threshold, and the estimate a face must reach. */
  margin: (site: string, age: number, approvedAge: number) => string
  /** Estimated over the threshold but under the cut-off: the check cannot place this face, and another try will not. */
  cannotPlace: (age: number, approvedAge: number) => string
  busy: string
  unreadable: string
  /** The live challenge's prompts, shown one after another while the frames are taken. */
  lookStraight: string
  turnLeft: string
  turnRight: string
  lookUp: string
  lookDown: string
  /** A "straight" prompt between turns: back to the camera, the capture is not over. */
  lookStraightNow: string
  lookStraightAgain: string
  tooDark: string
  /** A capture that answered no live challenge of this session (expired, used, or none asked for). */
  challengeExpired: string
  /** A still photo sent where only the live camera check is accepted. */
  cameraOnly: string
  failures: Record<FaceFailure, (age: number) => string>
}

/** The digital credential method's words: the page's script reads the short ones from a data attribute. */
export type CredentialMessages = {
  title: string
  intro: (age: number) => string
  privacy: string
  start: string
  scan: string
  openWallet: string
  useBrowserWallet: string
  waiting: string
  checking: string
  expired: string
  needsScript: string
  /** No answer from the wallet for this request yet. */
  noAnswer: string
  /** The browser's wallet picker closed without an answer (dismissed, or no wallet holds such an ID). */
  browserWalletCancelled: string
  /** The browser could not ask a wallet at all (no wallet for these protocols, or the request failed). */
  browserWalletFailed: string
  failures: Record<CredentialFailure, (age: number) => string>
}

export type { CredentialFailure }

/** Passkey re-verification's words: the page's script reads the short ones from a data attribute. */
export type PasskeyMessages = {
  useTitle: string
  useIntro: string
  use: string
  remove: string
  save: string
  saveIntro: string
  /** The name the visitor sees in their passkey manager. */
  credentialName: (age: number) => string
  working: string
  saved: string
  deleted: string
  /** The browser's dialog was closed or timed out (NotAllowedError). */
  cancelled: string
  /** Anything else the browser or the network refused. */
  failed: string
  failures: Record<PasskeyFailure, (age: number) => string>
}

/** Everything the visitor reads, per language. Functions take values that callers escape when rendering. */
export type Messages = {
  languageName: string
  pageTitle: string
  heading: string
  asks: (site: string, age: number) => string
  privacyTitle: string
  privacy: (site: string) => string
  chooseMethod: string
  noMethods: string
  noOtherMethods: string
  /** After a way closed for this session: the other ways this site takes, by name (`ways`: names of `wayNames`). */
  otherWays: (ways: string[]) => string
  wayNames: { credential: string; passkey: string }
  sandboxNotice: string
  testAge: string
  testMethod: string
  methodAgeOnly: string
  methodBiometric: string
  completeTest: string
  failedBelowAge: (age: number) => string
  invalidEvidence: string
  tryAgain: string
  attemptsLeft: (n: number) => string
  tooManyAttempts: (site: string) => string
  backToSite: (site: string) => string
  passTitle: string
  passCovers: (age: number) => string
  continueAsVerified: string
  forgetPass: string
  passForgotten: string
  errorTitle: string
  errorCode: string
  closeHint: string
  errors: Record<ErrorCode, string>
  /** A sentence for a case of a code, shown instead of the code's own (errors.ts `ErrorHint`). */
  errorHints: Record<ErrorHint, string>
  languageSwitch: string
  face: FaceMessages
  credential: CredentialMessages
  passkey: PasskeyMessages
}

const en: Messages = {
  languageName: 'English',
  pageTitle: 'Age check',
  heading: 'Confirm your age',
  asks: (site, age) => `${site} asks you to confirm that you are ${age} or older.`,
  privacyTitle: 'Your privacy',
  privacy: (site) =>
    `We check only that you are old enough. ${site} gets a yes for the age it asked about and a reference number, nothing else. We keep a record that a check took place (the site, the time, the kind of check and the age asked about), never your name, birth date, documents or pictures.`,
  chooseMethod: 'How do you want to confirm your age?',
  noMethods: 'No way to confirm your age is available for this site yet. Please contact the site.',
  noOtherMethods: 'There is no other way to confirm your age here.',
  otherWays: (ways) => `You can still use ${ways.length === 1 ? ways[0] : `${ways.slice(0, -1).join(', ')} or ${ways.at(-1)}`} here.`,
  wayNames: { credential: 'a digital ID', passkey: 'a passkey you saved earlier' },
  sandboxNotice: 'Test mode: this site is in the sandbox. No real check takes place and no real person is verified.',
  testAge: 'Test age',
  testMethod: 'Test method',
  methodAgeOnly: 'Age only (age_only)',
  methodBiometric: 'Biometric (biometric)',
  completeTest: 'Complete test verification',
  failedBelowAge: (age) => `The check did not confirm that you are ${age} or older.`,
  invalidEvidence: 'Please fill in every field.',
  tryAgain: 'You can try again.',
  attemptsLeft: (n) => (n === 1 ? '1 attempt left.' : `${n} attempts left.`),
  tooManyAttempts: (site) => `Too many attempts. Go back to ${site} and start again.`,
  backToSite: (site) => `Back to ${site}`,
  passTitle: 'Verified recently',
  passCovers: (age) => `This browser was verified recently as ${age} or older.`,
  continueAsVerified: 'Continue as verified',
  forgetPass: 'Not you? Forget this browser',
  passForgotten: 'This browser no longer remembers your age check.',
  errorTitle: 'This age check cannot continue',
  errorCode: 'Error code',
  closeHint: 'You can close this page and go back to the site that sent you.',
  languageSwitch: 'Language',
  face: {
    title: 'Check with your face',
    intro: 'Look into your camera in good light. Our server estimates your age from a few pictures; you need to look clearly older than the age asked for.',
    privacy: 'The pictures go only to this service, are used for the estimate and are deleted at once. They are never stored, shown to the site or shared.',
    startCamera: 'Start camera',
    preview: 'Camera preview',
    capture: 'Check my age',
    upload: 'Take a selfie',
    starting: 'Starting the camera…',
    ready: 'Look into the camera, then press “Check my age”.',
    checking: 'Checking your age… this takes a few seconds.',
    cameraUnavailable: 'The camera could not be started. You can take a selfie instead.',
    cameraNeeded: (site) => `The face check needs a camera. You can use another way, or go back to ${site}.`,
    cannotPlace: (age, approvedAge) =>
      `The face check cannot place you: your face looks ${age} or older, but we only approve faces we estimate at ${approvedAge} or more, and most people in their early twenties are estimated younger than that. Another try would give the same answer, so the face check is closed for this visit.`,
    margin: (site, age, approvedAge) =>
      `To pass, you need to look clearly older than ${age}: we approve only faces we estimate at ${approvedAge} or more, because age estimates can be off by years. If we cannot confirm it, you can use another way or go back to ${site}.`,
    busy: 'The age check is busy right now. Please try again in a moment.',
    unreadable: 'The picture could not be read. Please take it again.',
    lookStraight: 'Look straight at the camera.',
    turnLeft: 'Slowly turn your head to your left ←',
    turnRight: 'Slowly turn your head to your right →',
    lookUp: 'Slowly tilt your head up ↑',
    lookDown: 'Slowly tilt your head down ↓',
    lookStraightNow: 'Now look straight at the camera.',
    lookStraightAgain: 'Look straight at the camera again.',
    tooDark: 'It is too dark here. Find more light, facing it.',
    challengeExpired: 'The check took too long or was already used. Press “Check my age” to start again.',
    cameraOnly: 'This check needs the live camera: a photo cannot be used.',
    failures: {
      no_face: () => 'We could not see a face. Face the camera in good light.',
      several_faces: () => 'We saw more than one face. Make sure only you are in the picture.',
      face_too_small: () => 'Your face is too far away. Move closer to the camera.',
      too_blurry: () => 'The picture is blurred. Hold still in good light.',
      not_over_threshold: (age) => `The face check could not confirm that you are ${age} or older. This is not a judgement on you: estimates are uncertain, so we only approve faces that look clearly older. `,
      repeated_frames: () => 'These pictures were used before or repeat each other. Only a live camera can be used.',
      still: () => 'We saw no movement at all. Only a live camera can be used, not a photo.',
      face_changed: () => 'The face changed during the check. Only you should be in front of the camera.',
      no_turn: () => 'We did not see your head turn. Follow the prompts: turn your head, not the phone.',
      wrong_turn: () => 'Your head did not turn as the prompts asked. Follow each prompt in order.',
      no_frontal: () => 'We need to see you looking straight at the camera at the start and the end.',
    },
  },
  credential: {
    title: 'Use a digital ID',
    intro: (age) => `Share only “${age} or older” from an ID wallet: an EU digital identity or age verification app, or a mobile driving licence.`,
    privacy: 'Your wallet shows you what is asked before you agree. Only the yes-or-no for this age is shared; we keep neither the credential nor anything that could identify it.',
    start: 'Use my ID wallet',
    scan: 'Scan this code with your phone’s camera or wallet app.',
    openWallet: 'Open the wallet on this device',
    useBrowserWallet: 'Use a wallet on this device',
    waiting: 'Waiting for your wallet…',
    checking: 'Checking the answer from your wallet…',
    expired: 'The code has expired. Press the button to get a new one.',
    needsScript: 'This way needs JavaScript in your browser.',
    noAnswer: 'Your wallet has not answered yet. Share from your wallet, then try again.',
    browserWalletCancelled: 'No wallet on this device shared an answer. Try again, or use the QR code with your phone’s wallet.',
    browserWalletFailed: 'This browser could not reach a wallet on this device. Use the QR code with your phone’s wallet instead.',
    failures: {
      malformed: () => 'Your wallet’s answer could not be read.',
      wrong_credential: () => 'Your wallet shared a different kind of credential than the one asked for. Choose an ID or age credential in your wallet.',
      wrong_protocol: () => 'Your wallet answered in a way this page did not ask for. Update the wallet app, or scan the code with another wallet.',
      undecryptable: () => 'The answer from your wallet could not be opened: it was not made for this request. Start again and share once more.',
      untrusted_issuer: () => 'This credential comes from an issuer this service does not accept.',
      invalid_signature: () => 'The credential’s signature is not valid.',
      expired: () => 'This credential has expired.',
      key_binding: () => 'Your wallet could not prove it holds this credential.',
      wrong_nonce: () => 'This answer was made for another request. Start again from this page.',
      wrong_audience: () => 'This answer was made for another service. Start again from this page.',
      claim_missing: (age) => `Your wallet did not share whether you are ${age} or older.`,
      under_threshold: (age) => `Your credential does not show that you are ${age} or older.`,
      declined: () => 'You declined in your wallet. Nothing was shared.',
      revoked: () => 'This ID has been withdrawn by its issuer, so it cannot be used. Use another ID, or another way below.',
      suspended: () => 'This ID has been suspended by its issuer for now, so it cannot be used. Use another ID, or another way below.',
      status_unavailable: () => 'We could not check with your ID’s issuer that it is still valid. Try again in a moment; this did not use up a try.',
    },
  },
  passkey: {
    useTitle: 'Use my passkey',
    useIntro: 'Saved a passkey after an earlier age check? Use it to continue without a new check.',
    use: 'Use my passkey',
    remove: 'Delete my saved passkey',
    save: 'Save a passkey for your other devices',
    saveIntro: 'With a passkey, your other devices can skip the check for a year after this check. We keep only the passkey’s public key, the age proven and the date.',
    credentialName: (age) => `Age check: ${age} or older`,
    working: 'Waiting for your passkey…',
    saved: 'Your passkey is saved. Choose “Use my passkey” on any device that has it.',
    deleted: 'Your passkey is deleted. This service no longer accepts it.',
    cancelled: 'The passkey was not used. You can try again.',
    failed: 'Your passkey could not be used here. Please confirm your age another way.',
    failures: {
      challenge_expired: () => 'This took too long or was already used. Please try again.',
      invalid_response: () => 'Your passkey could not be checked. Please try again, or confirm your age another way.',
      unknown_passkey: () => 'This passkey is not saved with us: it was deleted or has expired. Please confirm your age another way.',
      passkey_expired: () => 'The check behind this passkey is more than a year old. Please confirm your age again; you can then save a new passkey.',
      age_not_covered: (age) => `Your passkey does not confirm that you are ${age} or older. Please confirm your age another way.`,
      sandbox_passkey: () => 'This passkey was saved in test mode and cannot be used here. Please confirm your age another way.',
      method_not_accepted: () => 'This site does not accept this passkey for the way your age was first checked. Please confirm your age another way.',
      no_age_pass: () => 'Saving a passkey needs a recent age check in this browser.',
      pass_too_old: () => 'Your last age check is too old to save a passkey from. Please confirm your age again first.',
      already_saved: () => 'This passkey is already saved.',
    },
  },
  errors: {
    invalid_request: 'The link to this page is incomplete or not valid.',
    invalid_client: 'The site that sent you here is not registered with this age check service.',
    invalid_grant: 'This request is not valid.',
    expired_code: 'This request has expired.',
    code_already_used: 'This request has already been used.',
    invalid_redirect_uri: 'The address to return you to is not registered for this site, so you will not be sent there.',
    invalid_state: 'This request is not valid.',
    unsupported_grant_type: 'This request is not valid.',
    unsupported_response_type: 'The link to this page asks for something this service does not offer.',
    client_suspended: 'The site that sent you here is suspended from this age check service.',
    age_requirement_not_met: 'The site asked to check a lower age than it is allowed to.',
    payment_required: 'The site that sent you here has used all its age checks for this month.',
    session_expired: 'This page has expired or was opened in another browser. Go back to the site and start again.',
    forbidden: 'This form was not sent from this page. Go back to the site and start again.',
    not_found: 'There is no page at this address.',
    too_many_requests: 'Too many requests from your network. Please wait a minute and try again.',
    server_error: 'Something went wrong on our side. Please try again in a moment.',
    temporarily_unavailable: 'The age check is not available right now. Please try again in a minute.',
  },
  errorHints: {
    pushed_request_required:
      'This site must prepare each age check with this service first (a pushed request), and this link was not prepared that way. Go back to the site and start again; if it keeps happening, the site needs to fix its link.',
  },
}

const de: Messages = {
  languageName: 'Deutsch',
  pageTitle: 'Altersprüfung',
  heading: 'Bestätigen Sie Ihr Alter',
  asks: (site, age) => `${site} bittet Sie zu bestätigen, dass Sie mindestens ${age} Jahre alt sind.`,
  privacyTitle: 'Ihre Privatsphäre',
  privacy: (site) =>
    `Wir prüfen nur, ob Sie alt genug sind. ${site} erhält ein Ja für das abgefragte Alter und eine Referenznummer, sonst nichts. Wir speichern, dass eine Prüfung stattfand (die Website, die Zeit, die Art der Prüfung und das abgefragte Alter), niemals Ihren Namen, Ihr Geburtsdatum, Dokumente oder Bilder.`,
  chooseMethod: 'Wie möchten Sie Ihr Alter bestätigen?',
  noMethods: 'Für diese Website ist noch keine Möglichkeit zur Altersbestätigung verfügbar. Bitte wenden Sie sich an die Website.',
  noOtherMethods: 'Hier gibt es keinen anderen Weg, Ihr Alter zu bestätigen.',
  otherWays: (ways) => `Sie können hier noch ${ways.length === 1 ? ways[0] : `${ways.slice(0, -1).join(', ')} oder ${ways.at(-1)}`} verwenden.`,
  wayNames: { credential: 'einen digitalen Ausweis', passkey: 'einen früher gespeicherten Passkey' },
  sandboxNotice: 'Testmodus: Diese Website ist in der Sandbox. Es findet keine echte Prüfung statt, und keine echte Person wird verifiziert.',
  testAge: 'Testalter',
  testMethod: 'Testmethode',
  methodAgeOnly: 'Nur Alter (age_only)',
  methodBiometric: 'Biometrisch (biometric)',
  completeTest: 'Testverifizierung abschließen',
  failedBelowAge: (age) => `Die Prüfung hat nicht bestätigt, dass Sie mindestens ${age} Jahre alt sind.`,
  invalidEvidence: 'Bitte füllen Sie alle Felder aus.',
  tryAgain: 'Sie können es erneut versuchen.',
  attemptsLeft: (n) => (n === 1 ? 'Noch 1 Versuch.' : `Noch ${n} Versuche.`),
  tooManyAttempts: (site) => `Zu viele Versuche. Kehren Sie zu ${site} zurück und beginnen Sie neu.`,
  backToSite: (site) => `Zurück zu ${site}`,
  passTitle: 'Kürzlich verifiziert',
  passCovers: (age) => `Dieser Browser wurde kürzlich als mindestens ${age} Jahre alt verifiziert.`,
  continueAsVerified: 'Als verifiziert fortfahren',
  forgetPass: 'Nicht Sie? Diesen Browser vergessen',
  passForgotten: 'Dieser Browser erinnert sich nicht mehr an Ihre Altersprüfung.',
  errorTitle: 'Diese Altersprüfung kann nicht fortgesetzt werden',
  errorCode: 'Fehlercode',
  closeHint: 'Sie können diese Seite schließen und zur Website zurückkehren, die Sie hierher geschickt hat.',
  languageSwitch: 'Sprache',
  face: {
    title: 'Mit Ihrem Gesicht prüfen',
    intro: 'Schauen Sie bei gutem Licht in Ihre Kamera. Unser Server schätzt Ihr Alter anhand einiger Bilder; Sie müssen deutlich älter aussehen als das abgefragte Alter.',
    privacy: 'Die Bilder gehen nur an diesen Dienst, werden für die Schätzung verwendet und sofort gelöscht. Sie werden nie gespeichert, der Website gezeigt oder weitergegeben.',
    startCamera: 'Kamera starten',
    preview: 'Kameravorschau',
    capture: 'Mein Alter prüfen',
    upload: 'Selfie aufnehmen',
    starting: 'Die Kamera wird gestartet…',
    ready: 'Schauen Sie in die Kamera und drücken Sie dann „Mein Alter prüfen“.',
    checking: 'Ihr Alter wird geprüft… das dauert einige Sekunden.',
    cameraUnavailable: 'Die Kamera konnte nicht gestartet werden. Sie können stattdessen ein Selfie aufnehmen.',
    cameraNeeded: (site) => `Die Prüfung mit dem Gesicht braucht eine Kamera. Sie können einen anderen Weg nutzen oder zu ${site} zurückkehren.`,
    cannotPlace: (age, approvedAge) =>
      `Die Prüfung mit dem Gesicht kann Sie nicht einordnen: Ihr Gesicht wirkt mindestens ${age} Jahre alt, aber wir bestätigen nur Gesichter, die wir auf ${approvedAge} Jahre oder älter schätzen, und die meisten Menschen Anfang zwanzig werden jünger geschätzt. Ein weiterer Versuch ergäbe dasselbe, daher ist die Prüfung mit dem Gesicht für diesen Besuch geschlossen.`,
    margin: (site, age, approvedAge) =>
      `Um die Prüfung zu bestehen, müssen Sie deutlich älter als ${age} aussehen: Wir bestätigen nur Gesichter, die wir auf ${approvedAge} Jahre oder älter schätzen, denn Altersschätzungen können um Jahre danebenliegen. Wenn wir es nicht bestätigen können, können Sie einen anderen Weg nutzen oder zu ${site} zurückkehren.`,
    busy: 'Die Altersprüfung ist gerade ausgelastet. Bitte versuchen Sie es gleich noch einmal.',
    unreadable: 'Das Bild konnte nicht gelesen werden. Bitte nehmen Sie es erneut auf.',
    lookStraight: 'Schauen Sie direkt in die Kamera.',
    turnLeft: 'Drehen Sie den Kopf langsam nach links ←',
    turnRight: 'Drehen Sie den Kopf langsam nach rechts →',
    lookUp: 'Neigen Sie den Kopf langsam nach oben ↑',
    lookDown: 'Neigen Sie den Kopf langsam nach unten ↓',
    lookStraightNow: 'Schauen Sie jetzt wieder direkt in die Kamera.',
    lookStraightAgain: 'Schauen Sie wieder direkt in die Kamera.',
    tooDark: 'Es ist zu dunkel. Suchen Sie mehr Licht und wenden Sie sich ihm zu.',
    challengeExpired: 'Die Prüfung hat zu lange gedauert oder wurde schon verwendet. Drücken Sie „Mein Alter prüfen“, um neu zu beginnen.',
    cameraOnly: 'Diese Prüfung braucht die Live-Kamera: Ein Foto kann nicht verwendet werden.',
    failures: {
      no_face: () => 'Wir konnten kein Gesicht erkennen. Schauen Sie bei gutem Licht in die Kamera.',
      several_faces: () => 'Wir haben mehr als ein Gesicht gesehen. Achten Sie darauf, dass nur Sie im Bild sind.',
      face_too_small: () => 'Ihr Gesicht ist zu weit entfernt. Gehen Sie näher an die Kamera.',
      too_blurry: () => 'Das Bild ist unscharf. Halten Sie bei gutem Licht still.',
      not_over_threshold: (age) => `Die Prüfung mit dem Gesicht konnte nicht bestätigen, dass Sie mindestens ${age} Jahre alt sind. Das ist kein Urteil über Sie: Schätzungen sind unsicher, daher bestätigen wir nur Gesichter, die deutlich älter aussehen.`,
      repeated_frames: () => 'Diese Bilder wurden schon verwendet oder wiederholen sich. Nur eine Live-Kamera kann verwendet werden.',
      still: () => 'Wir haben keinerlei Bewegung gesehen. Nur eine Live-Kamera kann verwendet werden, kein Foto.',
      face_changed: () => 'Das Gesicht hat sich während der Prüfung geändert. Nur Sie sollten vor der Kamera sein.',
      no_turn: () => 'Wir haben keine Kopfdrehung gesehen. Folgen Sie den Anweisungen: Drehen Sie den Kopf, nicht das Telefon.',
      wrong_turn: () => 'Ihr Kopf hat sich nicht wie angewiesen gedreht. Folgen Sie den Anweisungen der Reihe nach.',
      no_frontal: () => 'Wir müssen Sie am Anfang und am Ende direkt in die Kamera schauen sehen.',
    },
  },
  credential: {
    title: 'Mit einem digitalen Ausweis',
    intro: (age) => `Teilen Sie nur „mindestens ${age}“ aus einer Ausweis-Wallet: einer EU-Identitäts- oder Altersnachweis-App oder einem mobilen Führerschein.`,
    privacy: 'Ihre Wallet zeigt Ihnen vor der Zustimmung, was abgefragt wird. Geteilt wird nur das Ja oder Nein zu diesem Alter; wir speichern weder den Nachweis noch etwas, woran er zu erkennen wäre.',
    start: 'Meine Ausweis-Wallet verwenden',
    scan: 'Scannen Sie diesen Code mit der Kamera oder der Wallet-App Ihres Handys.',
    openWallet: 'Wallet auf diesem Gerät öffnen',
    useBrowserWallet: 'Eine Wallet auf diesem Gerät verwenden',
    waiting: 'Warten auf Ihre Wallet…',
    checking: 'Die Antwort Ihrer Wallet wird geprüft…',
    expired: 'Der Code ist abgelaufen. Drücken Sie die Schaltfläche für einen neuen.',
    needsScript: 'Dieser Weg braucht JavaScript in Ihrem Browser.',
    noAnswer: 'Ihre Wallet hat noch nicht geantwortet. Teilen Sie aus Ihrer Wallet und versuchen Sie es erneut.',
    browserWalletCancelled: 'Keine Wallet auf diesem Gerät hat eine Antwort geteilt. Versuchen Sie es erneut oder nutzen Sie den QR-Code mit der Wallet Ihres Telefons.',
    browserWalletFailed: 'Dieser Browser konnte keine Wallet auf diesem Gerät erreichen. Nutzen Sie stattdessen den QR-Code mit der Wallet Ihres Telefons.',
    failures: {
      malformed: () => 'Die Antwort Ihrer Wallet konnte nicht gelesen werden.',
      wrong_credential: () => 'Ihre Wallet hat eine andere Art von Nachweis geteilt als die angefragte. Wählen Sie in Ihrer Wallet einen Ausweis oder Altersnachweis.',
      wrong_protocol: () => 'Ihre Wallet hat auf eine Weise geantwortet, nach der diese Seite nicht gefragt hat. Aktualisieren Sie die Wallet-App oder scannen Sie den Code mit einer anderen Wallet.',
      undecryptable: () => 'Die Antwort Ihrer Wallet ließ sich nicht öffnen: Sie war nicht für diese Anfrage bestimmt. Beginnen Sie neu und teilen Sie noch einmal.',
      untrusted_issuer: () => 'Dieser Nachweis stammt von einem Aussteller, den dieser Dienst nicht anerkennt.',
      invalid_signature: () => 'Die Signatur des Nachweises ist ungültig.',
      expired: () => 'Dieser Nachweis ist abgelaufen.',
      key_binding: () => 'Ihre Wallet konnte nicht belegen, dass sie diesen Nachweis besitzt.',
      wrong_nonce: () => 'Diese Antwort gehört zu einer anderen Anfrage. Beginnen Sie auf dieser Seite neu.',
      wrong_audience: () => 'Diese Antwort war für einen anderen Dienst bestimmt. Beginnen Sie auf dieser Seite neu.',
      claim_missing: (age) => `Ihre Wallet hat nicht geteilt, ob Sie mindestens ${age} Jahre alt sind.`,
      under_threshold: (age) => `Ihr Nachweis zeigt nicht, dass Sie mindestens ${age} Jahre alt sind.`,
      declined: () => 'Sie haben in Ihrer Wallet abgelehnt. Es wurde nichts geteilt.',
      revoked: () => 'Dieser Ausweis wurde von seinem Aussteller zurückgezogen und kann nicht verwendet werden. Nutzen Sie einen anderen Ausweis oder einen anderen Weg unten.',
      suspended: () => 'Dieser Ausweis wurde von seinem Aussteller vorübergehend gesperrt und kann nicht verwendet werden. Nutzen Sie einen anderen Ausweis oder einen anderen Weg unten.',
      status_unavailable: () => 'Wir konnten beim Aussteller Ihres Ausweises nicht prüfen, ob er noch gültig ist. Versuchen Sie es gleich noch einmal; dieser Versuch wurde nicht angerechnet.',
    },
  },
  passkey: {
    useTitle: 'Meinen Passkey verwenden',
    useIntro: 'Haben Sie nach einer früheren Altersprüfung einen Passkey gespeichert? Damit geht es ohne neue Prüfung weiter.',
    use: 'Meinen Passkey verwenden',
    remove: 'Meinen gespeicherten Passkey löschen',
    save: 'Einen Passkey für Ihre anderen Geräte speichern',
    saveIntro: 'Mit einem Passkey können Ihre anderen Geräte die Prüfung bis ein Jahr nach dieser Prüfung überspringen. Wir speichern nur den öffentlichen Schlüssel des Passkeys, das bestätigte Alter und das Datum.',
    credentialName: (age) => `Altersprüfung: mindestens ${age}`,
    working: 'Warten auf Ihren Passkey…',
    saved: 'Ihr Passkey ist gespeichert. Wählen Sie „Meinen Passkey verwenden“ auf jedem Gerät, das ihn hat.',
    deleted: 'Ihr Passkey ist gelöscht. Dieser Dienst akzeptiert ihn nicht mehr.',
    cancelled: 'Der Passkey wurde nicht verwendet. Sie können es erneut versuchen.',
    failed: 'Ihr Passkey konnte hier nicht verwendet werden. Bitte bestätigen Sie Ihr Alter auf einem anderen Weg.',
    failures: {
      challenge_expired: () => 'Das hat zu lange gedauert oder wurde schon verwendet. Bitte versuchen Sie es erneut.',
      invalid_response: () => 'Ihr Passkey konnte nicht geprüft werden. Versuchen Sie es erneut oder bestätigen Sie Ihr Alter auf einem anderen Weg.',
      unknown_passkey: () => 'Dieser Passkey ist bei uns nicht gespeichert: Er wurde gelöscht oder ist abgelaufen. Bitte bestätigen Sie Ihr Alter auf einem anderen Weg.',
      passkey_expired: () => 'Die Prüfung hinter diesem Passkey ist mehr als ein Jahr alt. Bitte bestätigen Sie Ihr Alter erneut; danach können Sie einen neuen Passkey speichern.',
      age_not_covered: (age) => `Ihr Passkey bestätigt nicht, dass Sie mindestens ${age} Jahre alt sind. Bitte bestätigen Sie Ihr Alter auf einem anderen Weg.`,
      sandbox_passkey: () => 'Dieser Passkey wurde im Testmodus gespeichert und kann hier nicht verwendet werden. Bitte bestätigen Sie Ihr Alter auf einem anderen Weg.',
      method_not_accepted: () => 'Diese Website akzeptiert diesen Passkey für die Art, wie Ihr Alter zuerst geprüft wurde, nicht. Bitte bestätigen Sie Ihr Alter auf einem anderen Weg.',
      no_age_pass: () => 'Zum Speichern eines Passkeys braucht es eine kürzliche Altersprüfung in diesem Browser.',
      pass_too_old: () => 'Ihre letzte Altersprüfung ist zu alt, um daraus einen Passkey zu speichern. Bitte bestätigen Sie Ihr Alter zuerst erneut.',
      already_saved: () => 'Dieser Passkey ist bereits gespeichert.',
    },
  },
  errors: {
    invalid_request: 'Der Link zu dieser Seite ist unvollständig oder ungültig.',
    invalid_client: 'Die Website, die Sie hierher geschickt hat, ist bei diesem Dienst nicht registriert.',
    invalid_grant: 'Diese Anfrage ist ungültig.',
    expired_code: 'Diese Anfrage ist abgelaufen.',
    code_already_used: 'Diese Anfrage wurde bereits verwendet.',
    invalid_redirect_uri: 'Die Rücksprungadresse ist für diese Website nicht registriert, daher werden Sie nicht dorthin weitergeleitet.',
    invalid_state: 'Diese Anfrage ist ungültig.',
    unsupported_grant_type: 'Diese Anfrage ist ungültig.',
    unsupported_response_type: 'Der Link zu dieser Seite verlangt etwas, das dieser Dienst nicht anbietet.',
    client_suspended: 'Die Website, die Sie hierher geschickt hat, ist für diesen Dienst gesperrt.',
    age_requirement_not_met: 'Die Website hat ein niedrigeres Alter abgefragt, als sie darf.',
    payment_required: 'Die Website, die Sie hierher geschickt hat, hat alle Altersprüfungen für diesen Monat aufgebraucht.',
    session_expired: 'Diese Seite ist abgelaufen oder wurde in einem anderen Browser geöffnet. Kehren Sie zur Website zurück und beginnen Sie neu.',
    forbidden: 'Dieses Formular wurde nicht von dieser Seite gesendet. Kehren Sie zur Website zurück und beginnen Sie neu.',
    not_found: 'Unter dieser Adresse gibt es keine Seite.',
    too_many_requests: 'Zu viele Anfragen aus Ihrem Netz. Bitte warten Sie eine Minute und versuchen Sie es erneut.',
    server_error: 'Bei uns ist etwas schiefgelaufen. Bitte versuchen Sie es gleich noch einmal.',
    temporarily_unavailable: 'Die Altersprüfung ist gerade nicht erreichbar. Bitte versuchen Sie es in einer Minute noch einmal.',
  },
  errorHints: {
    pushed_request_required:
      'Diese Website muss jede Altersprüfung zuerst bei diesem Dienst anmelden (eine vorab übermittelte Anfrage), und dieser Link wurde nicht so erstellt. Kehren Sie zur Website zurück und beginnen Sie neu; wenn das wieder passiert, muss die Website ihren Link korrigieren.',
  },
}

export const languages = { en, de } as const
export type Language = keyof typeof languages

/**
 * The page's language: an explicit `?lang=` wins, then the best `Accept-Language` match (RFC 9110
 * §12.5.4 quality values), then English.
 */
/** Own keys only: `"constructor" in languages` is true, and a page in that language would be a 500. */
export function isLanguage(value: string | null | undefined): value is Language {
  return typeof value === 'string' && Object.hasOwn(languages, value)
}

export function pickLanguage(acceptLanguage: string | null | undefined, explicit?: string | null): Language {
  if (isLanguage(explicit)) return explicit
  const ranked = (acceptLanguage ?? '')
    .split(',')
    .map((part) => {
      const [tag = '', ...params] = part.trim().toLowerCase().split(';')
      const q = params.map((p) => /^\s*q=([\d.]+)\s*$/.exec(p)?.[1]).find(Boolean)
      return { primary: tag.split('-')[0]!, q: q === undefined ? 1 : Number(q) }
    })
    .filter((entry) => entry.q > 0)
    .sort((a, b) => b.q - a.q)
  return (ranked.find((entry) => isLanguage(entry.primary))?.primary as Language | undefined) ?? 'en'
}
