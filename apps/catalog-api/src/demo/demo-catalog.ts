import type { ContactType } from '../contacts/contact.entity';
import type {
  AccessCategory,
  ConsentStatus,
  SubjectsCategory,
} from '../datasets/data-declaration.entity';
import type { LegalBasisCode, PersonalDataCode } from '../datasets/legal-basis.entity';
import type { UseClass, UseConditionRule } from '../datasets/use-condition-codes';
import type { GeoCategory, SectorCategory } from '../partners/partner.entity';

/**
 * The demo catalog as plain data; `demo-import-documents.ts` makes import documents of it and
 * `demo-data-loader.ts` loads them. Names are fictional.
 */

export const DEMO_PARTNERS: {
  name: string;
  acronym: string;
  country: string;
  geo: GeoCategory;
  sector: SectorCategory;
  clinical: boolean;
  published: boolean;
  address: string;
}[] = [
  {
    name: 'Luxembourg Centre for Systems Biomedicine',
    acronym: 'LCSB',
    country: 'LU',
    geo: 'National',
    sector: 'PUBLIC',
    clinical: false,
    published: true,
    address: '6 avenue du Swing, Belvaux',
  },
  {
    name: 'Centre Hospitalier de Luxembourg',
    acronym: 'CHL',
    country: 'LU',
    geo: 'National',
    sector: 'PUBLIC',
    clinical: true,
    published: true,
    address: '4 rue Nicolas Ernest Barblé, Luxembourg',
  },
  {
    name: 'Integrated BioBank of Luxembourg',
    acronym: 'IBBL',
    country: 'LU',
    geo: 'National',
    sector: 'PUBLIC',
    clinical: false,
    published: true,
    address: '1 rue Louis Rech, Dudelange',
  },
  {
    name: 'University Hospital of the Saarland',
    acronym: 'UKS',
    country: 'DE',
    geo: 'EU',
    sector: 'PUBLIC',
    clinical: true,
    published: true,
    address: 'Kirrberger Strasse, Homburg',
  },
  {
    name: 'Northwind Genomics',
    acronym: 'NWG',
    country: 'CH',
    geo: 'Non_EU',
    sector: 'PRIVATE_P',
    clinical: false,
    published: false,
    address: 'Bahnhofstrasse 1, Basel',
  },
];

export const DEMO_CONTACTS: {
  key: string;
  first: string;
  last: string;
  email: string;
  type: ContactType;
  partners: string[];
  oidc?: string;
  phone?: string;
}[] = [
  {
    key: 'dupont',
    first: 'Marie',
    last: 'Dupont',
    email: 'marie.dupont@chl.example.lu',
    type: 'Principal_Investigator',
    partners: ['CHL'],
    phone: '+352 4411 0000',
  },
  {
    key: 'schmidt',
    first: 'Anna',
    last: 'Schmidt',
    email: 'anna.schmidt@uks.example.de',
    type: 'Legal_Representative',
    partners: ['UKS'],
  },
  {
    key: 'weber',
    first: 'Paul',
    last: 'Weber',
    email: 'paul.weber@ibbl.example.lu',
    type: 'Data_Manager',
    partners: ['IBBL'],
  },
  {
    key: 'jensen',
    first: 'Lars',
    last: 'Jensen',
    email: 'lars.jensen@nwg.example.ch',
    type: 'Researcher',
    partners: ['NWG'],
    oidc: 'demo-oidc-lars-jensen',
  },
];

/**
 * The researcher of the demo's whole journey: granted the datasets of the demo drop zone, whose
 * imports register under these titles in PD-OMICS (apps/provisioner/src/demo/demo-dropzone.ts),
 * so their DRS objects are hers to read. `npm start` prints her subject (scripts/start.mjs) and
 * `npm run drs` acts as her beside it.
 */
export const DEMO_RESEARCHER = {
  username: 'rita.researcher',
  subject: 'demo-oidc-rita-researcher',
  datasets: ['Baseline whole-exome reads', 'Baseline phenotypes'],
} as const;

export const DEMO_USERS: {
  username: string;
  first: string;
  last: string;
  groups: string[];
  active: boolean;
  oidc?: string;
  /** Users whose demo key is printed; the others get a key nobody is shown. */
  withKey: boolean;
}[] = [
  {
    username: 'alice.white',
    first: 'Alice',
    last: 'White',
    groups: [],
    active: true,
    oidc: 'demo-oidc-alice-white',
    withKey: true,
  },
  {
    username: 'john.black',
    first: 'John',
    last: 'Black',
    groups: [],
    active: true,
    withKey: false,
  },
  {
    username: 'roy.blue',
    first: 'Roy',
    last: 'Blue',
    groups: [],
    active: true,
    oidc: 'demo-oidc-roy-blue',
    withKey: true,
  },
  {
    username: 'sara.steward',
    first: 'Sara',
    last: 'Steward',
    groups: ['data-steward'],
    active: true,
    withKey: true,
  },
  {
    username: 'olga.auditor',
    first: 'Olga',
    last: 'Auditor',
    groups: ['auditor'],
    active: true,
    withKey: false,
  },
  {
    username: 'victor.viewer',
    first: 'Victor',
    last: 'Viewer',
    groups: [],
    active: true,
    oidc: 'demo-oidc-victor-viewer',
    withKey: true,
  },
  {
    username: DEMO_RESEARCHER.username,
    first: 'Rita',
    last: 'Researcher',
    groups: [],
    active: true,
    oidc: DEMO_RESEARCHER.subject,
    withKey: false,
  },
  {
    username: 'former.staff',
    first: 'Former',
    last: 'Staff',
    groups: [],
    active: false,
    withKey: true,
  },
];

export const DEMO_COHORTS = [
  {
    name: "Luxembourg Parkinson's Study",
    description:
      "Longitudinal study of people with Parkinson's disease and matched controls in Luxembourg and the Greater Region.",
    url: 'https://parkinson.example.lu',
    owners: ['dupont'],
    institutes: ['CHL', 'LCSB'],
    published: true,
  },
  {
    name: 'Saarland Metabolic Cohort',
    description: 'Population cohort on metabolic disorders.',
    url: null,
    owners: ['schmidt'],
    institutes: ['UKS'],
    published: true,
  },
  {
    name: 'Northwind Volunteers',
    description: 'Healthy volunteers recruited by an industrial partner.',
    url: null,
    owners: ['jensen'],
    institutes: ['NWG'],
    published: false,
  },
];

export const DEMO_PROJECTS = [
  {
    acronym: 'PD-OMICS',
    title: "Multi-omics of Parkinson's disease",
    description:
      "Integrates metabolomics, transcriptomics and clinical data to find early markers of Parkinson's disease.",
    erp: true,
    erpNotes: 'ERP-21-003',
    cner: true,
    cnerNotes: 'CNER 202101/02',
    start: '2021-01-01',
    end: '2026-12-31',
    custodians: ['alice.white'],
    personnel: ['roy.blue'],
    contacts: ['dupont'],
    publications: [
      {
        citation:
          "White A, Dupont M. Plasma metabolites in early Parkinson's disease. J Park Dis. 2023;13:101-112.",
        doi: '10.1000/demo.2023.101',
      },
    ],
    metadata: '{"keywords": ["Parkinson", "omics"]}',
  },
  {
    acronym: 'EPIC-DREM',
    title: 'Gene regulatory interactions in cell differentiation',
    description:
      'Time-series transcriptomic and epigenomic profiles of differentiating stromal cells.',
    erp: true,
    erpNotes: 'Covered by the umbrella project LUX-Epigen.',
    cner: false,
    cnerNotes: null,
    start: '2020-03-02',
    end: '2021-04-30',
    custodians: ['john.black'],
    personnel: ['roy.blue'],
    contacts: ['weber'],
    publications: [
      {
        citation:
          'Black J et al. Dynamic regulatory networks of differentiation. Nucleic Acids Res. 2019;47:1141-1163.',
        doi: null,
      },
    ],
    metadata: '{}',
  },
  {
    acronym: 'IRON-DEF',
    title: 'Iron deficiency and neurodegeneration',
    description: 'Small-scale integrity data on iron deficiency in neuronal cells.',
    erp: false,
    erpNotes: null,
    cner: false,
    cnerNotes: null,
    start: '2022-05-01',
    end: null,
    custodians: ['alice.white'],
    personnel: [],
    contacts: ['schmidt'],
    publications: [],
    metadata: '{}',
  },
];

export interface DemoDeclaration {
  title: string;
  cohorts: string[];
  dataTypes: string[];
  access: AccessCategory;
  subjects: SubjectsCategory;
  consent: ConsentStatus | null;
  storageEnd: string;
  conditions: { useClass: UseClass; note: string; rule: UseConditionRule }[];
}

export interface DemoDataset {
  title: string;
  project: string;
  description: string;
  custodians: string[];
  declarations: DemoDeclaration[];
  legalBasis: { codes: LegalBasisCode[]; personal: PersonalDataCode[]; notes: string };
  storages: { platform: string; location: string }[];
  transfer?: { partner: string; details: string; date: string };
}

const pub = (note: string) => ({ useClass: 'PUB' as const, note, rule: 'OBLIGATION' as const });
const hmb = (note: string) => ({ useClass: 'HMB' as const, note, rule: 'PERMISSION' as const });

function dataset(
  title: string,
  project: string,
  custodians: string[],
  dataTypes: string[],
  cohorts: string[],
  extra: Partial<DemoDataset> = {},
): DemoDataset {
  return {
    title,
    project,
    description: `${title}, collected within ${project}.`,
    custodians,
    declarations: [
      {
        title: `${title}: primary data`,
        cohorts,
        dataTypes,
        access: 'controlled_access',
        subjects: 'cases_and_controls',
        consent: 'homogeneous',
        storageEnd: '2031-12-31',
        conditions: [pub('Acknowledgement required.'), hmb('Health research only.')],
      },
    ],
    legalBasis: { codes: ['6.1(a)'], personal: ['Health', 'Special'], notes: 'Informed consent.' },
    storages: [{ platform: 'Atlas HPC', location: `/srv/projects/${project.toLowerCase()}` }],
    ...extra,
  };
}

export const DEMO_DATASETS: DemoDataset[] = [
  dataset(
    'PD-OMICS plasma metabolomics',
    'PD-OMICS',
    ['alice.white'],
    ['Metabolomics', 'Clinical_data'],
    ["Luxembourg Parkinson's Study"],
    {
      transfer: {
        partner: 'University Hospital of the Saarland',
        details: 'Aggregated results only',
        date: '2023-02-01',
      },
    },
  ),
  dataset(
    'PD-OMICS blood transcriptomics',
    'PD-OMICS',
    ['alice.white'],
    ['RNASeq'],
    ["Luxembourg Parkinson's Study"],
  ),
  dataset(
    'PD-OMICS clinical follow-up',
    'PD-OMICS',
    ['alice.white'],
    ['Clinical_data', 'Lifestyle_data'],
    ["Luxembourg Parkinson's Study", 'Saarland Metabolic Cohort'],
  ),
  dataset(
    'PD-OMICS imaging',
    'PD-OMICS',
    ['alice.white'],
    ['Clinical_Imaging'],
    ["Luxembourg Parkinson's Study"],
  ),
  dataset(
    'EPIC-DREM sequencing data',
    'EPIC-DREM',
    ['john.black'],
    ['RNASeq', 'ChIP-seq', 'Samples'],
    [],
  ),
  dataset('EPIC-DREM chromatin accessibility', 'EPIC-DREM', ['john.black'], ['ATAC-seq'], []),
  dataset('EPIC-DREM methylation', 'EPIC-DREM', ['john.black'], ['Methylation_array'], []),
  dataset(
    'Iron deficiency integrity data',
    'IRON-DEF',
    ['alice.white'],
    ['Other', 'Samples'],
    ['Saarland Metabolic Cohort'],
  ),
  dataset('Iron deficiency proteomics', 'IRON-DEF', ['alice.white'], ['Proteomics'], []),
  dataset('Iron deficiency pilot', 'IRON-DEF', ['alice.white'], ['Other_omics_data'], []),
  // The demo drop zone's datasets: its imports register their storage copies here.
  dataset(
    DEMO_RESEARCHER.datasets[0],
    'PD-OMICS',
    ['alice.white'],
    ['Exome_sequencing'],
    ["Luxembourg Parkinson's Study"],
  ),
  dataset(
    DEMO_RESEARCHER.datasets[1],
    'PD-OMICS',
    ['alice.white'],
    ['Clinical_data'],
    ["Luxembourg Parkinson's Study"],
  ),
];

export const DEMO_ENDPOINTS = [
  {
    name: 'ELIXIR Luxembourg Data Catalog',
    urlPattern: 'https://datacatalog.example.org/e/dataset/${entity_id}',
  },
  { name: 'Partner Data Portal', urlPattern: 'https://portal.example.org/datasets/${entity_id}' },
];

/** dataset title -> exposures: [endpoint index, form id, deprecated?] */
export const DEMO_EXPOSURES: [string, number, number, boolean][] = [
  ['PD-OMICS plasma metabolomics', 0, 7, false],
  ['PD-OMICS plasma metabolomics', 1, 8, false],
  ['PD-OMICS blood transcriptomics', 0, 7, false],
  ['PD-OMICS clinical follow-up', 1, 8, true],
  ['EPIC-DREM sequencing data', 0, 9, false],
  ['EPIC-DREM chromatin accessibility', 0, 9, true],
  [DEMO_RESEARCHER.datasets[0], 0, 7, false],
  [DEMO_RESEARCHER.datasets[1], 0, 7, false],
];
