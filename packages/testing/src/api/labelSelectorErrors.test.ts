import { FakeApiServer } from '../fakeApiServer.js';
import { labelSelectorError } from './labelSelectorErrors.js';
import { request } from '../wire.test.helpers.js';

// kube-apiserver answers a labelSelector that labels.Parse rejects with 400 BadRequest and the
// parser's error text as the message (apimachinery pkg/labels/selector.go: Parser.parse,
// parseRequirement, parseOperator, parseValues, parseIdentifiersList, parseExactValue; the key and
// value validations of pkg/api/validate/content/kube.go, whose field paths print as `<nil>` and
// `values[0][key]` because Parse is called without a path). Expected texts are traced from that source.

const KEY_RULE =
  "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
const VALUE_RULE =
  "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";

describe('label selector errors (apimachinery labels.Parse wording)', () => {
  test.each([
    ['! =foo', "unable to parse requirement: found '=', expected: identifier"],
    ['x==a==b', "found '==', expected: ',' or 'end of string'"],
    ['!x=a', "found '=', expected: ',' or 'end of string'"],
    [',a', "found ',', expected: !, identifier, or 'end of string'"],
    ['=a', "found '=', expected: !, identifier, or 'end of string'"],
    ['a,', "found '', expected: identifier after ','"],
    ['a,=b', "found '=', expected: identifier after ','"],
    ['x foo', "unable to parse requirement: found 'foo', expected: in, notin, =, ==, !=, gt, lt"],
    ['x in a', "unable to parse requirement: found 'a' expected: '('"],
    ['x in (a b)', "unable to parse requirement: found 'b', expected: ',' or ')'"],
    ['x in (a', "unable to parse requirement: found '', expected: ',' or ')'"],
    ['x in (=)', "unable to parse requirement: found '=', expected: ',', ')' or identifier"],
    ['x in (a,=)', "unable to parse requirement: found '=', expected: ',', or identifier"],
    ['x=(', "unable to parse requirement: found '(', expected: identifier"],
    [
      'x<a',
      `unable to parse requirement: values[0]: Invalid value: "a": for 'Gt', 'Lt' operators, the value must be an integer`,
    ],
    ['Bad_=x', `unable to parse requirement: <nil>: Invalid value: "Bad_": ${KEY_RULE}`],
    ['x=a||y', `unable to parse requirement: values[0][x]: Invalid value: "a||y": ${VALUE_RULE}`],
    [
      'x in (b_,a_)',
      `unable to parse requirement: [values[0][x]: Invalid value: "a_": ${VALUE_RULE}, values[1][x]: Invalid value: "b_": ${VALUE_RULE}]`,
    ],
    ['/x', 'unable to parse requirement: <nil>: Invalid value: "/x": prefix part must be non-empty'],
  ])('%s', (selector, message) => {
    expect(labelSelectorError(selector)).toBe(message);
  });

  test.each([
    '',
    ' ',
    'x',
    '!x',
    'x=',
    'x= ,z= ',
    'x in ()',
    'x in (a,,b)',
    'in in (in)',
    'x>1,z<5',
    'notin=in',
    'example.com/a=b',
  ])('accepts %j as apimachinery does', (selector) => {
    expect(labelSelectorError(selector)).toBeUndefined();
  });

  test('a LIST or WATCH with a bad labelSelector is 400 BadRequest with that message', async () => {
    const server = await FakeApiServer.start();
    try {
      for (const watch of ['', '&watch=true']) {
        const res = await request(
          `${server.url}/api/v1/pods?labelSelector=${encodeURIComponent('app==web==x')}${watch}`,
        );
        expect(res.status).toBe(400);
        expect(res.text).toBe(
          `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"found '==', expected: ',' or 'end of string'","reason":"BadRequest","code":400}\n`,
        );
      }
    } finally {
      await server.close();
    }
  });
});
