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
