/** Word lists for synthetic people, places and organisations. No real patient or person is described. */

export const FEMALE_FIRST_NAMES = [
  'Mary', 'Patricia', 'Linda', 'Barbara', 'Elizabeth', 'Dorothy', 'Margaret', 'Ruth', 'Helen', 'Betty',
  'Shirley', 'Frances', 'Joan', 'Evelyn', 'Carol', 'Judith', 'Gloria', 'Janet', 'Nancy', 'Marilyn',
  'Rosa', 'María', 'Lucía', 'Carmen', 'Josefina', 'Mei', 'Lan', 'Aaliyah', 'Zoë', 'Renée',
  'Beatrice', 'Loretta', 'Irene', 'Mildred', 'Geraldine', 'Phyllis', 'Anita', 'Yolanda', 'Hoa', 'Ingrid',
];

export const MALE_FIRST_NAMES = [
  'James', 'Robert', 'John', 'William', 'Richard', 'Charles', 'Thomas', 'Donald', 'George', 'Kenneth',
  'Harold', 'Walter', 'Raymond', 'Eugene', 'Ralph', 'Arthur', 'Albert', 'Clarence', 'Frank', 'Henry',
  'José', 'Luis', 'Andrés', 'Ramón', 'Jesús', 'Wei', 'Minh', 'Darnell', 'Reginald', 'Otis',
  'Stanley', 'Leonard', 'Gerald', 'Howard', 'Earl', 'Francis', 'Víctor', 'Bernard', 'Duc', 'Lars',
];

export const LAST_NAMES = [
  'Smith', 'Johnson', 'Williams', 'Brown', 'Jones', 'Miller', 'Davis', 'Wilson', 'Anderson', 'Taylor',
  'Thomas', 'Moore', 'Martin', 'Jackson', 'Thompson', 'White', 'Harris', 'Clark', 'Lewis', 'Robinson',
  'Walker', 'Young', 'Allen', 'King', 'Wright', 'Scott', 'Green', 'Baker', 'Adams', 'Nelson',
  'Hill', 'Campbell', 'Mitchell', 'Roberts', 'Carter', 'Phillips', 'Evans', 'Turner', 'Parker', 'Collins',
  'García', 'Rodríguez', 'Martínez', 'Hernández', 'López', 'González', 'Pérez', 'Sánchez', 'Ramírez', 'Muñoz',
  'Nguyễn', 'Tran', 'Le', 'Pham', 'Chen', 'Wang', 'Li', 'Kim', 'Park', 'Patel',
  "O'Brien", 'McCarthy', 'Sullivan', 'Murphy', 'Kowalski', 'Nowak', 'Schmidt', 'Müller', 'Bergström', 'Johansson',
  'Washington', 'Jefferson', 'Brooks', 'Coleman', 'Simmons', 'Bryant', 'Russell', 'Griffin', 'Hayes', 'Fontaine',
];

export const NAME_SUFFIXES = ['Jr.', 'Sr.', 'II', 'III'];

export const STREET_NAMES = [
  'Maple', 'Oak', 'Cedar', 'Elm', 'Pine', 'Walnut', 'Chestnut', 'Willow', 'Birch', 'Sycamore',
  'Main', 'Church', 'Park', 'Lake', 'Hill', 'Mill', 'Spring', 'River', 'Meadow', 'Ridge',
  'Washington', 'Lincoln', 'Jefferson', 'Franklin', 'Jackson', 'Madison', 'Highland', 'Orchard', 'Sunset', 'Prospect',
  'Center', 'Broad', 'Union', 'Grove', 'Forest', 'Valley', 'Cherry', 'Dogwood', 'Magnolia', 'Hickory',
];

export const STREET_SUFFIXES = ['St', 'Ave', 'Rd', 'Dr', 'Ln', 'Ct', 'Blvd', 'Way', 'Pl', 'Ter'];

/** Place names found in many states, so any ZIP can plausibly carry one. */
export const CITY_NAMES = [
  'Springfield', 'Franklin', 'Greenville', 'Clinton', 'Fairview', 'Salem', 'Madison', 'Georgetown', 'Arlington', 'Ashland',
  'Dover', 'Oxford', 'Jackson', 'Burlington', 'Manchester', 'Milton', 'Newport', 'Auburn', 'Centerville', 'Clayton',
  'Dayton', 'Lexington', 'Milford', 'Riverside', 'Winchester', 'Bristol', 'Kingston', 'Marion', 'Mount Vernon', 'Oakland',
];

export const ORGANIZATION_WORDS = [
  'Riverside', 'Lakeview', 'St. Anne', 'Mercy', 'Good Samaritan', 'Valley', 'Northside', 'Summit', 'Heritage', 'Pinecrest',
  'Memorial', 'Sacred Heart', 'Bayview', 'Cedar Ridge', 'Willow Creek', 'Highland', 'Providence', 'Unity', 'Meadowbrook', 'Crossroads',
];

export const PHYSICIAN_SPECIALTIES = [
  'Internal Medicine', 'Family Medicine', 'Cardiology', 'Pulmonology', 'Oncology', 'Neurology', 'Orthopedic Surgery',
  'Geriatric Medicine', 'Nephrology', 'Hospice and Palliative Medicine', 'Endocrinology', 'General Surgery',
];

interface DiagnosisTemplate {
  code: string;
  description: string;
}

/** ICD-10-CM codes common on home health, hospice and private duty referrals. */
export const DIAGNOSES: Readonly<Record<'home_health' | 'hospice' | 'private_duty', readonly DiagnosisTemplate[]>> = {
  home_health: [
    { code: 'I50.9', description: 'Heart failure, unspecified' },
    { code: 'J44.1', description: 'Chronic obstructive pulmonary disease with (acute) exacerbation' },
    { code: 'E11.9', description: 'Type 2 diabetes mellitus without complications' },
    { code: 'Z47.1', description: 'Aftercare following joint replacement surgery' },
    { code: 'I69.351', description: 'Hemiplegia following cerebral infarction affecting right dominant side' },
    { code: 'L89.154', description: 'Pressure ulcer of sacral region, stage 4' },
    { code: 'J18.9', description: 'Pneumonia, unspecified organism' },
    { code: 'I10', description: 'Essential (primary) hypertension' },
    { code: 'R26.81', description: 'Unsteadiness on feet' },
    { code: 'N18.4', description: 'Chronic kidney disease, stage 4 (severe)' },
  ],
  hospice: [
    { code: 'C34.90', description: 'Malignant neoplasm of unspecified part of unspecified bronchus or lung' },
    { code: 'G30.9', description: "Alzheimer's disease, unspecified" },
    { code: 'I50.22', description: 'Chronic systolic (congestive) heart failure' },
    { code: 'J43.9', description: 'Emphysema, unspecified' },
    { code: 'C61', description: 'Malignant neoplasm of prostate' },
    { code: 'C50.919', description: 'Malignant neoplasm of unspecified site of unspecified female breast' },
    { code: 'N18.6', description: 'End stage renal disease' },
    { code: 'G12.21', description: 'Amyotrophic lateral sclerosis' },
  ],
  private_duty: [
    { code: 'G20', description: "Parkinson's disease" },
    { code: 'F03.90', description: 'Unspecified dementia without behavioral disturbance' },
    { code: 'G35', description: 'Multiple sclerosis' },
    { code: 'Z74.1', description: 'Need for assistance with personal care' },
    { code: 'R54', description: 'Age-related physical debility' },
    { code: 'I69.354', description: 'Hemiplegia following cerebral infarction affecting left non-dominant side' },
  ],
};
