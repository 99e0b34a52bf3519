/** GA4GH consent codes accepted as `use_class`, with the label exported as `use_class_label`. */
export const USE_CLASS_LABELS = {
  NRES: 'No restrictions',
  GRU: 'General research use',
  HMB: 'Health or medical or biomedical research',
  DS: 'Disease specific research',
  POA: 'Population origins or ancestry research',
  RS: 'Research specific restrictions',
  RUO: 'Research use only',
  NMDS: 'No general methods research',
  GSO: 'Genetic studies only',
  NPU: 'Not-for-profit use only',
  PUB: 'Publication required',
  COL: 'Collaboration required',
  RTN: 'Return to database or resource',
  IRB: 'Ethics approval required',
  GS: 'Geographical restriction',
  MOR: 'Publication moratorium',
  TS: 'Time limit on use',
  US: 'User specific restriction',
  PS: 'Project specific restriction',
  IS: 'Institution specific restriction',
  IP: 'Intellectual property restriction',
  Other: 'Other',
} as const;

export type UseClass = keyof typeof USE_CLASS_LABELS;
export const USE_CLASSES = Object.keys(USE_CLASS_LABELS) as UseClass[];

export const USE_CONDITION_RULES = [
  'PROHIBITION',
  'OBLIGATION',
  'PERMISSION',
  'CONSTRAINED_PERMISSION',
] as const;
export type UseConditionRule = (typeof USE_CONDITION_RULES)[number];

/**
 * GA4GH consent codes as Data Use Ontology terms (DUO, purl.obolibrary.org/obo/duo.owl): the one
 * mapping behind the JSON API's `duo_iri`, DCAT's `dct:type`, the trail's `duo` and the audit
 * crate. IP and Other have no DUO term: they stay a label and note.
 */
const DUO_TERMS: Partial<Record<UseClass, string>> = {
  NRES: 'DUO_0000004',
  GRU: 'DUO_0000042',
  HMB: 'DUO_0000006',
  DS: 'DUO_0000007',
  POA: 'DUO_0000011',
  RS: 'DUO_0000012',
  RUO: 'DUO_0000014',
  NMDS: 'DUO_0000015',
  GSO: 'DUO_0000016',
  NPU: 'DUO_0000018',
  PUB: 'DUO_0000019',
  COL: 'DUO_0000020',
  IRB: 'DUO_0000021',
  GS: 'DUO_0000022',
  MOR: 'DUO_0000024',
  TS: 'DUO_0000025',
  US: 'DUO_0000026',
  PS: 'DUO_0000027',
  IS: 'DUO_0000028',
  RTN: 'DUO_0000029',
};

export const DUO_BASE = 'http://purl.obolibrary.org/obo/';

/** The DUO term's IRI of a consent code, or null when DUO has none (IP, Other). */
export function duoIri(useClass: string): string | null {
  const term = DUO_TERMS[useClass as UseClass];
  return term === undefined ? null : `${DUO_BASE}${term}`;
}

/** Every consent code with a DUO term, and its IRI (for SQL that renders the IRI itself). */
export const DUO_IRIS: Record<string, string> = Object.fromEntries(
  USE_CLASSES.flatMap((code) => {
    const found = duoIri(code);
    return found === null ? [] : [[code, found]];
  }),
);
