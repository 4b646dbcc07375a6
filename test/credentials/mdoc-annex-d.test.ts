import { describe, expect, test } from 'bun:test'
import { createHash, verify, X509Certificate } from 'node:crypto'
import { decode, encode, getEncoded, type ITag, Tag } from 'cbor2'
import type { JWK } from 'jose'
import { verifyMdocAgePresentation, type MdocPresentationCheck } from '../../src/credentials/iso-mdoc/verify.ts'
import { parseTrustList } from '../../src/credentials/trust/trust-list.ts'
import { issueMdoc, presentMdoc } from '../wallets/mdoc.ts'
import { openId4VpTranscript } from '../wallets/transcripts.ts'
import { createMdocPki, generateP256KeyPair } from './pki.ts'
import { offlineRevocation } from './status-fixtures.ts'

/**
 * ISO/IEC 18013-5:2021 Annex D, the standard's worked example of an mDL ("utopia"): its DeviceResponse
 * (D.4.1.2), authenticated by deviceMac over the SessionTranscript of its proximity session, with the keys of
 * its device and reader. Hex as the Multipaz test vectors hold it (openwallet-foundation-labs/identity-credential,
 * multipaz/src/commonTest/kotlin/org/multipaz/mdoc/TestVectors.kt, ISO_18013_5_ANNEX_D_*). The IACA root, which
 * Multipaz does not ship, is nl-wallet's (MinBZK/nl-wallet, wallet_core/lib/crypto/src/examples.rs); that it
 * issued the example's document signer is checked below, not assumed.
 */
const DEVICE_RESPONSE = [
  'a36776657273696f6e63312e3069646f63756d656e747381a367646f6354797065756f72672e69736f2e31383031332e352e312e6d444c6c6973737565725369',
  '676e6564a26a6e616d65537061636573a1716f72672e69736f2e31383031332e352e3186d8185863a4686469676573744944006672616e646f6d58208798645b',
  '20ea200e19ffabac92624bee6aec63aceedecfb1b80077d22bfc20e971656c656d656e744964656e7469666965726b66616d696c795f6e616d656c656c656d65',
  '6e7456616c756563446f65d818586ca4686469676573744944036672616e646f6d5820b23f627e8999c706df0c0a4ed98ad74af988af619b4bb078b89058553f',
  '44615d71656c656d656e744964656e7469666965726a69737375655f646174656c656c656d656e7456616c7565d903ec6a323031392d31302d3230d818586da4',
  '686469676573744944046672616e646f6d5820c7ffa307e5de921e67ba5878094787e8807ac8e7b5b3932d2ce80f00f3e9abaf71656c656d656e744964656e74',
  '69666965726b6578706972795f646174656c656c656d656e7456616c7565d903ec6a323032342d31302d3230d818586da4686469676573744944076672616e64',
  '6f6d582026052a42e5880557a806c1459af3fb7eb505d3781566329d0b604b845b5f9e6871656c656d656e744964656e7469666965726f646f63756d656e745f',
  '6e756d6265726c656c656d656e7456616c756569313233343536373839d818590471a4686469676573744944086672616e646f6d5820d094dad764a2eb9deb52',
  '10e9d899643efbd1d069cc311d3295516ca0b024412d71656c656d656e744964656e74696669657268706f7274726169746c656c656d656e7456616c75655904',
  '12ffd8ffe000104a46494600010101009000900000ffdb004300130d0e110e0c13110f11151413171d301f1d1a1a1d3a2a2c2330453d4947443d43414c566d5d',
  '4c51685241435f82606871757b7c7b4a5c869085778f6d787b76ffdb0043011415151d191d381f1f38764f434f76767676767676767676767676767676767676',
  '76767676767676767676767676767676767676767676767676767676767676ffc00011080018006403012200021101031101ffc4001b00000301000301000000',
  '000000000000000005060401020307ffc400321000010303030205020309000000000000010203040005110612211331141551617122410781a1163542527391',
  'b2c1f1ffc4001501010100000000000000000000000000000001ffc4001a110101010003010000000000000000000000014111213161ffda000c030100021103',
  '11003f00a5bbde22da2329c7d692bc7d0d03f52cfb0ff75e7a7ef3e7709723a1d0dae146ddfbb3c039ce07ad2bd47a7e32dbb8dd1d52d6ef4b284f64a480067d',
  'fb51f87ffb95ff00eb9ff14d215de66af089ce44b7dbde9cb6890a2838eddf18078f7add62d411ef4db9b10a65d6b95a147381ea0d495b933275fe6bba75c114',
  '104a8ba410413e983dff004f5af5d34b4b4cde632d0bf1fd1592bdd91c6411f3934c2fa6af6b54975d106dcf4a65ae56e856001ebc03c7ce29dd9eef1ef10fc4',
  '47dc9da76ad2aee93537a1ba7e4f70dd8eff0057c6dffb5e1a19854a83758e54528750946ec6704850cd037bceb08b6d7d2cc76d3317fc7b5cc04fb6707269c5',
  'c6e0c5b60ae549242123b0e493f602a075559e359970d98db89525456b51c951c8afa13ea8e98e3c596836783d5c63f5a61a99fdb7290875db4be88ab384bbbb',
  'bfc7183fdeaa633e8951db7da396dc48524fb1a8bd611a5aa2a2432f30ab420a7a6d3240c718cf031fa9ef4c9ad550205aa02951df4a1d6c8421b015b769db8c',
  '9229837ea2be8b1b0d39d0eba9c51484efdb8c0efd8d258daf3c449699f2edbd4584e7af9c64e3f96b9beb28d4ac40931e6478c8e76a24a825449501d867d2b1',
  'dcdebae99b9c752ae4ecd6dde4a179c1c1e460938f9149ef655e515c03919a289cb3dca278fb7bf177f4faa829dd8ce3f2ac9a7ecde490971fafd7dce15eed9b',
  '71c018c64fa514514b24e8e4f8c5c9b75c1e82579dc1233dfec08238f6add62d391acc1c5256a79e706d52d431c7a0145140b9fd149eb3a60dc5e88cbbc2da09',
  '2411e9dc71f39a7766b447b344e847dcac9dcb5abba8d145061d43a6fcf1e65cf15d0e90231d3dd9cfe62995c6dcc5ca12a2c904a15f71dd27d451453e09d1a2',
  '1450961cbb3ea8a956433b781f1ce33dfed54f0e2b50a2b71d84ed6db18028a28175f74fc6bda105c529a791c25c4f3c7a11f71586268f4a66b726e33de9ea6f',
  '1b52b181c760724e47b514520a5a28a283ffd9d81858ffa4686469676573744944096672616e646f6d58204599f81beaa2b20bd0ffcc9aa03a6f985befab3f6b',
  'eaffa41e6354cdb2ab2ce471656c656d656e744964656e7469666965727264726976696e675f70726976696c656765736c656c656d656e7456616c756582a375',
  '76656869636c655f63617465676f72795f636f646561416a69737375655f64617465d903ec6a323031382d30382d30396b6578706972795f64617465d903ec6a',
  '323032342d31302d3230a37576656869636c655f63617465676f72795f636f646561426a69737375655f64617465d903ec6a323031372d30322d32336b657870',
  '6972795f64617465d903ec6a323032342d31302d32306a697373756572417574688443a10126a118215901f3308201ef30820195a00302010202143c4416eed7',
  '84f3b413e48f56f075abfa6d87eb84300a06082a8648ce3d04030230233114301206035504030c0b75746f7069612069616361310b3009060355040613025553',
  '301e170d3230313030313030303030305a170d3231313030313030303030305a30213112301006035504030c0975746f706961206473310b3009060355040613',
  '0255533059301306072a8648ce3d020106082a8648ce3d03010703420004ace7ab7340e5d9648c5a72a9a6f56745c7aad436a03a43efea77b5fa7b88f0197d57',
  'd8983e1b37d3a539f4d588365e38cbbf5b94d68c547b5bc8731dcd2f146ba381a83081a5301e0603551d120417301581136578616d706c65406578616d706c65',
  '2e636f6d301c0603551d1f041530133011a00fa00d820b6578616d706c652e636f6d301d0603551d0e0416041414e29017a6c35621ffc7a686b7b72db06cd123',
  '51301f0603551d2304183016801454fa2383a04c28e0d930792261c80c4881d2c00b300e0603551d0f0101ff04040302078030150603551d250101ff040b3009',
  '060728818c5d050102300a06082a8648ce3d040302034800304502210097717ab9016740c8d7bcdaa494a62c053bbdecce1383c1aca72ad08dbc04cbb202203b',
  'ad859c13a63c6d1ad67d814d43e2425caf90d422422c04a8ee0304c0d3a68d5903a2d81859039da66776657273696f6e63312e306f646967657374416c676f72',
  '6974686d675348412d3235366c76616c756544696765737473a2716f72672e69736f2e31383031332e352e31ad00582075167333b47b6c2bfb86eccc1f438cf5',
  '7af055371ac55e1e359e20f254adcebf01582067e539d6139ebd131aef441b445645dd831b2b375b390ca5ef6279b205ed45710258203394372ddb78053f36d5',
  'd869780e61eda313d44a392092ad8e0527a2fbfe55ae0358202e35ad3c4e514bb67b1a9db51ce74e4cb9b7146e41ac52dac9ce86b8613db555045820ea5c3304',
  'bb7c4a8dcb51c4c13b65264f845541341342093cca786e058fac2d59055820fae487f68b7a0e87a749774e56e9e1dc3a8ec7b77e490d21f0e1d3475661aa1d06',
  '58207d83e507ae77db815de4d803b88555d0511d894c897439f5774056416a1c7533075820f0549a145f1cf75cbeeffa881d4857dd438d627cf32174b1731c4c',
  '38e12ca936085820b68c8afcb2aaf7c581411d2877def155be2eb121a42bc9ba5b7312377e068f660958200b3587d1dd0c2a07a35bfb120d99a0abfb5df56865',
  'bb7fa15cc8b56a66df6e0c0a5820c98a170cf36e11abb724e98a75a5343dfa2b6ed3df2ecfbb8ef2ee55dd41c8810b5820b57dd036782f7b14c6a30faaaae6cc',
  'd5054ce88bdfa51a016ba75eda1edea9480c5820651f8736b18480fe252a03224ea087b5d10ca5485146c67c74ac4ec3112d4c3a746f72672e69736f2e313830',
  '31332e352e312e5553a4005820d80b83d25173c484c5640610ff1a31c949c1d934bf4cf7f18d5223b15dd4f21c0158204d80e1e2e4fb246d97895427ce7000bb',
  '59bb24c8cd003ecf94bf35bbd2917e340258208b331f3b685bca372e85351a25c9484ab7afcdf0d2233105511f778d98c2f544035820c343af1bd16907154391',
  '61aba73702c474abf992b20c9fb55c36a336ebe01a876d6465766963654b6579496e666fa1696465766963654b6579a40102200121582096313d6c63e24e3372',
  '742bfdb1a33ba2c897dcd68ab8c753e4fbd48dca6b7f9a2258201fb3269edd418857de1b39a4e4a44b92fa484caa722c228288f01d0c03a2c3d667646f635479',
  '7065756f72672e69736f2e31383031332e352e312e6d444c6c76616c6964697479496e666fa3667369676e6564c074323032302d31302d30315431333a33303a',
  '30325a6976616c696446726f6dc074323032302d31302d30315431333a33303a30325a6a76616c6964556e74696cc074323032312d31302d30315431333a3330',
  '3a30325a584059e64205df1e2f708dd6db0847aed79fc7c0201d80fa55badcaf2e1bcf5902e1e5a62e4832044b890ad85aa53f129134775d733754d7cb7a4137',
  '66aeff13cb2e6c6465766963655369676e6564a26a6e616d65537061636573d81841a06a64657669636541757468a1696465766963654d61638443a10105a0f6',
  '5820e99521a85ad7891b806a07f8b5388a332d92c189a7bf293ee1f543405ae6824d6673746174757300',
].join('')
const SESSION_TRANSCRIPT_BYTES = [
  'd81859024183d8185858a20063312e30018201d818584ba4010220012158205a88d182bce5f42efa59943f33359d2e8a968ff289d93e5fa444b624343167fe22',
  '5820b16e8cf858ddc7690407ba61d4c338237a8cfcf3de6aa672fc60a557aa32fc67d818584ba40102200121582060e3392385041f51403051f2415531cb56dd',
  '3f999c71687013aac6768bc8187e225820e58deb8fdbe907f7dd5368245551a34796f7d2215c440c339bb0f7b67beccdfa8258c391020f487315d10209616301',
  '013001046d646f631a200c016170706c69636174696f6e2f766e642e626c7565746f6f74682e6c652e6f6f6230081b28128b37282801021c015c1e580469736f',
  '2e6f72673a31383031333a646576696365656e676167656d656e746d646f63a20063312e30018201d818584ba4010220012158205a88d182bce5f42efa59943f',
  '33359d2e8a968ff289d93e5fa444b624343167fe225820b16e8cf858ddc7690407ba61d4c338237a8cfcf3de6aa672fc60a557aa32fc6758cd91022548721591',
  '020263720102110204616301013000110206616301036e6663005102046163010157001a201e016170706c69636174696f6e2f766e642e626c7565746f6f7468',
  '2e6c652e6f6f6230081b28078080bf2801021c021107c832fff6d26fa0beb34dfcd555d4823a1c11010369736f2e6f72673a31383031333a6e66636e6663015a',
  '172b016170706c69636174696f6e2f766e642e7766612e6e616e57030101032302001324fec9a70b97ac9684a4e326176ef5b981c5e8533e5f00298cfccbc35e',
  '700a6b020414',
].join('')
const IACA_CERTIFICATE = [
  '308201ce30820173a00302010202142ab4edd052b2582f4c6ad96186de70f4de5a3994300a06082a8648ce3d04030230233114301206035504030c0b75746f70',
  '69612069616361310b3009060355040613025553301e170d3230313030313030303030305a170d3239303932393030303030305a30233114301206035504030c',
  '0b75746f7069612069616361310b30090603550406130255533059301306072a8648ce3d020106082a8648ce3d030107034200042c3e103dbc07b25c5a770aee',
  'dfa5d8bd15417e3e676142461a7875e3b4188a2221e6423599d1db19aaef66f923d394b61709549bcec2ea6ff60ec75268f2e094a38184308181301e0603551d',
  '120417301581136578616d706c65406578616d706c652e636f6d301c0603551d1f041530133011a00fa00d820b6578616d706c652e636f6d301d0603551d0e04',
  '16041454fa2383a04c28e0d930792261c80c4881d2c00b300e0603551d0f0101ff04040302010630120603551d130101ff040830060101ff020100300a06082a',
  '8648ce3d0403020349003046022100ec897f0b8ae51028288955031f860069659b75989af7129fa609c24299a5c787022100d088d8741f5d05b360ef6e85023e',
  '90df1d31dd1e6701a88efe9a7103021f986c',
].join('')
const hex = (text: string) => new Uint8Array(Buffer.from(text, 'hex'))
const jwk = (x: string, y: string, d?: string): JWK => ({
  kty: 'EC',
  crv: 'P-256',
  x: Buffer.from(x, 'hex').toString('base64url'),
  y: Buffer.from(y, 'hex').toString('base64url'),
  ...(d && { d: Buffer.from(d, 'hex').toString('base64url') }),
})
/** SDeviceKey, the device key the example's MSO binds (D.4.1.2), and EReaderKey, the reader's session key. */
const DEVICE_KEY = jwk(
  '96313d6c63e24e3372742bfdb1a33ba2c897dcd68ab8c753e4fbd48dca6b7f9a',
  '1fb3269edd418857de1b39a4e4a44b92fa484caa722c228288f01d0c03a2c3d6',
  '6ed542ad4783f0b18c833fadf2171273a35d969c581691ef704359cc7cf1e8c0',
)
const READER_KEY = jwk('60e3392385041f51403051f2415531cb56dd3f999c71687013aac6768bc8187e', 'e58deb8fdbe907f7dd5368245551a34796f7d2215c440c339bb0f7b67beccdfa')
const ELEMENTS = ['family_name', 'issue_date', 'expiry_date', 'document_number', 'portrait', 'driving_privileges']
const MDL = 'org.iso.18013.5.1.mDL'
/** Inside the validity of the example's MSO and document signer (2020-10-01 to 2021-10-01). */
const DURING = Date.parse('2021-01-01T00:00:00Z') / 1000

type Document = { docType: string; issuerSigned: { nameSpaces?: Record<string, Tag[]>; issuerAuth: [Uint8Array, Map<number, unknown>, Uint8Array, Uint8Array] } }

function firstDocument(response: Uint8Array): Document {
  return (decode(response, { saveOriginal: true }) as { documents: Document[] }).documents[0]!
}

/** The example's document as our holder keeps an issued mdoc: `{ docType, issuerSigned }`, its bytes unchanged. */
function annexDIssued(): Uint8Array {
  const { docType, issuerSigned } = firstDocument(hex(DEVICE_RESPONSE))
  return encode({ docType, issuerSigned })
}

/** The SessionTranscript inside SessionTranscriptBytes = #6.24(bstr .cbor SessionTranscript). */
const annexDTranscript = () => (decode(hex(SESSION_TRANSCRIPT_BYTES)) as Tag).contents as Uint8Array

/**
 * What ISO 18013-5 §9.1.2 says of an IssuerSigned, read with cbor2 and node:crypto: the layout of issuerAuth
 * and the MSO, whether each item's digest is the hash of its IssuerSignedItemBytes (tag 24 included), and
 * whether the signature holds over Sig_structure (RFC 9052 §4.4) with the x5chain's first certificate.
 */
function issuerSignedFacts({ issuerSigned }: Document) {
  const [protectedHeader, unprotected, payload, signature] = issuerSigned.issuerAuth
  const x5chain = unprotected.get(33) as Uint8Array | Uint8Array[]
  const leaf = new X509Certificate(Array.isArray(x5chain) ? x5chain[0]! : x5chain)
  const toBeSigned = encode(['Signature1', protectedHeader, new Uint8Array(), payload])
  const msoBytes = decode(payload) as Tag
  // tdate = #6.0(tstr): kept as the tag it is, not turned into a Date.
  const mso = decode(msoBytes.contents as Uint8Array, { preferMap: true, tags: new Map([[0, (tag: ITag) => tag]]) }) as Map<string, unknown>
  const validity = mso.get('validityInfo') as Map<string, Tag>
  const valueDigests = mso.get('valueDigests') as Map<string, Map<number, Uint8Array>>
  const hash = (mso.get('digestAlgorithm') as string).replace('-', '').toLowerCase()
  const items = Object.entries(issuerSigned.nameSpaces ?? {}).flatMap(([namespace, tagged]) =>
    tagged.map((tag) => ({ namespace, bytes: getEncoded(tag)!, item: decode(tag.contents as Uint8Array, { preferMap: true }) as Map<string, unknown> })),
  )
  return {
    protectedHeader: Buffer.from(protectedHeader).toString('hex'),
    unprotectedLabels: [...unprotected.keys()],
    payloadTag: msoBytes.tag,
    msoMembers: [...mso.keys()],
    validityInfo: [...validity].map(([name, tdate]) => [name, tdate.tag, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/.test(tdate.contents as string)]),
    deviceKeyLabels: [...((mso.get('deviceKeyInfo') as Map<string, Map<number, unknown>>).get('deviceKey')!.keys())],
    itemMembers: [...new Set(items.map(({ item }) => [...item.keys()].join()))],
    randomsOf16BytesOrMore: items.every(({ item }) => (item.get('random') as Uint8Array).length >= 16),
    digestsMatch: items.every(({ namespace, bytes, item }) =>
      Buffer.from(valueDigests.get(namespace)!.get(item.get('digestID') as number)!).equals(createHash(hash).update(bytes).digest()),
    ),
    signatureHolds: verify('sha256', toBeSigned, { key: leaf.publicKey, dsaEncoding: 'ieee-p1363' }, signature),
  }
}

describe('ISO 18013-5 Annex D, and the independent mdoc holder (test/wallets/mdoc.ts)', () => {
  test('the holder writes the Annex D DeviceResponse byte for byte from its IssuerSigned, device key, reader key and transcript', async () => {
    const response = await presentMdoc(annexDIssued(), {
      holderPrivateKey: DEVICE_KEY,
      sessionTranscript: annexDTranscript(),
      threshold: 18,
      disclose: ELEMENTS,
      deviceMacReaderKey: READER_KEY,
    })
    // deviceMac (§9.1.3.5) is a MAC over DeviceAuthenticationBytes: equal bytes mean our DeviceAuthentication,
    // its embedding of the transcript, EMacKey's derivation and the DeviceResponse layout are the standard's.
    expect(Buffer.from(response).toString('hex')).toBe(DEVICE_RESPONSE)
  })

  test("the issuer's IssuerSigned has the Annex D layout, digests and signature by the same reading of §9.1.2", async () => {
    const annexD = issuerSignedFacts(firstDocument(hex(DEVICE_RESPONSE)))
    expect(annexD.digestsMatch).toBe(true)
    expect(annexD.signatureHolds).toBe(true)
    expect(annexD.validityInfo).toEqual(['signed', 'validFrom', 'validUntil'].map((name) => [name, 0, true]))
    const pki = await createMdocPki({ from: new Date('2020-01-01'), signerUntil: new Date('2030-01-01') })
    const issued = await issueMdoc({
      signerKey: pki.signer.privateKey,
      signerCertificate: pki.signerPem,
      holderPublicKey: (await generateP256KeyPair()).publicKey,
      docType: MDL,
      namespace: 'org.iso.18013.5.1',
      ages: { '18': true, '21': false },
      validFrom: new Date('2021-01-01T12:00:00.250Z'),
      validUntil: new Date('2022-01-01T12:00:00Z'),
    })
    expect(issuerSignedFacts(decode(issued, { saveOriginal: true }) as Document)).toEqual(annexD)
  })
})

describe('verifyMdocAgePresentation, given the Annex D mDL', () => {
  const root = new X509Certificate(hex(IACA_CERTIFICATE))
  const trustList = parseTrustList(root.toString())
  const transcript = openId4VpTranscript({ clientId: 'x509_hash:Uvo3HtuIxuhC92rShpgqcT3YXwrqRxWEviRiA0OZszk', nonce: 'n-0S6_WzA2Mj', responseUri: 'https://age.example/r' })
  const check = (overrides: Partial<MdocPresentationCheck> = {}): MdocPresentationCheck => ({
    trustList,
    sessionTranscript: transcript,
    docType: MDL,
    threshold: 18,
    now: DURING,
    revocation: offlineRevocation(new Date(DURING * 1000)),
    ...overrides,
  })
  /** The example's mdoc, answered by its device key over our transcript with a signature, as OpenID4VP asks. */
  const presentAnnexD = () => presentMdoc(annexDIssued(), { holderPrivateKey: DEVICE_KEY, sessionTranscript: transcript, threshold: 18, disclose: ELEMENTS })

  test('the IACA root issued the example document signer', () => {
    const signer = new X509Certificate(firstDocument(hex(DEVICE_RESPONSE)).issuerSigned.issuerAuth[1].get(33) as Uint8Array)
    expect(signer.checkIssued(root) && signer.verify(root.publicKey)).toBe(true)
  })

  test('the example as it stands is read, and refused for its deviceMac only', async () => {
    const response = hex(DEVICE_RESPONSE)
    expect(await verifyMdocAgePresentation(response, check({ sessionTranscript: annexDTranscript() }))).toEqual({ valid: false, failure: 'key_binding' })
  })

  test('its IssuerSigned answered with a device signature passes every check and has no age statement: a missing claim', async () => {
    expect(await verifyMdocAgePresentation(await presentAnnexD(), check())).toEqual({ valid: false, failure: 'claim_missing' })
  })

  test('after the document signer certificate and MSO ran out (2021-10-01) it is expired', async () => {
    expect(await verifyMdocAgePresentation(await presentAnnexD(), check({ now: Date.parse('2022-01-01T00:00:00Z') / 1000 }))).toEqual({ valid: false, failure: 'expired' })
  })

  test('without the utopia IACA in the trust list it is untrusted', async () => {
    const other = await createMdocPki({ from: new Date('2020-01-01'), signerUntil: new Date('2030-01-01') })
    expect(await verifyMdocAgePresentation(await presentAnnexD(), check({ trustList: parseTrustList(other.rootPem) }))).toEqual({ valid: false, failure: 'untrusted_issuer' })
  })

  test('a byte flipped in its issuer signature is an invalid signature', async () => {
    const response = await presentAnnexD()
    const signature = Buffer.from(firstDocument(response).issuerSigned.issuerAuth[3])
    const at = Buffer.from(response).indexOf(signature)
    const tampered = Uint8Array.from(response)
    tampered[at + 10]! ^= 0x01
    expect(await verifyMdocAgePresentation(tampered, check())).toEqual({ valid: false, failure: 'invalid_signature' })
  })
})
