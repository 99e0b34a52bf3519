import { PersonDirectory, PersonRecord } from './person-directory';

const person = (over: Partial<PersonRecord> & Pick<PersonRecord, 'kind' | 'id'>): PersonRecord => ({
  oidcId: null,
  email: null,
  firstName: 'F',
  lastName: 'L',
  ...over,
});

describe('PersonDirectory.resolve', () => {
  it('takes a user by subject before a contact with the same subject', () => {
    const user = person({ kind: 'user', id: 1, oidcId: 's' });
    const dir = new PersonDirectory([person({ kind: 'contact', id: 9, oidcId: 's' }), user]);
    expect(dir.resolve('s', null)).toEqual({ outcome: 'match', person: user, via: 'subject' });
  });

  it('takes a contact by subject before anyone by email', () => {
    const contact = person({ kind: 'contact', id: 2, oidcId: 's' });
    const dir = new PersonDirectory([person({ kind: 'user', id: 1, email: 'a@x.org' }), contact]);
    expect(dir.resolve('s', 'a@x.org')).toMatchObject({ outcome: 'match', person: contact });
  });

  it('matches an email case-insensitively when the record has no subject', () => {
    const user = person({ kind: 'user', id: 1, email: ' A@X.org' });
    expect(new PersonDirectory([user]).resolve('s', 'a@x.ORG')).toEqual({
      outcome: 'match',
      person: user,
      via: 'email',
    });
  });

  it('creates rather than taking over an email match that belongs to another subject', () => {
    const dir = new PersonDirectory([
      person({ kind: 'user', id: 1, email: 'a@x.org', oidcId: 'other' }),
    ]);
    expect(dir.resolve('s', 'a@x.org')).toEqual({ outcome: 'create' });
  });

  it('reports a conflict when two records share the email', () => {
    const dir = new PersonDirectory([
      person({ kind: 'contact', id: 4, email: 'a@x.org' }),
      person({ kind: 'user', id: 3, email: 'A@x.org' }),
    ]);
    expect(dir.resolve('s', 'a@x.org')).toEqual({
      outcome: 'conflict',
      reason: '2 records share the email a@x.org (user 3, contact 4)',
    });
  });

  it('creates when nothing matches or there is no email', () => {
    const dir = new PersonDirectory([person({ kind: 'user', id: 1, email: 'a@x.org' })]);
    expect(dir.resolve('s', 'b@x.org')).toEqual({ outcome: 'create' });
    expect(dir.resolve('s', null)).toEqual({ outcome: 'create' });
  });

  it('sees records put after construction, replacing by kind and id', () => {
    const dir = new PersonDirectory([person({ kind: 'contact', id: 5, email: 'a@x.org' })]);
    dir.put(person({ kind: 'contact', id: 5, email: 'a@x.org', oidcId: 's' }));
    expect(dir.resolve('s', null)).toMatchObject({ outcome: 'match', via: 'subject' });
    expect(dir.resolve('t', 'a@x.org')).toEqual({ outcome: 'create' });
  });
});
