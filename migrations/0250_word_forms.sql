-- Words that full-text stemming does not bring together but a person reads as one: irregular
-- verb forms (`met` is `meet`, `bought` is `buy`) and the everyday short forms of chat (`mom`,
-- `pic`, `fave`). Recall matches a query word to a text holding any word of its group
-- (src/memory/store/query-terms.ts). General English, not a thesaurus: every group is one word
-- in different clothes, never a related idea.
--
-- Kept stemmed (here, once, as queries and texts are), one row per lexeme with every lexeme it
-- shares a group with, itself included: a query looks each of its words up by primary key instead
-- of sending and stemming the whole list every time. Nobody's data: the same for every user.
-- To change the groups, a later migration replaces the rows.
CREATE TABLE word_forms (
  lexeme text PRIMARY KEY,
  forms text[] NOT NULL
);

WITH grouped AS (
  SELECT DISTINCT t.lexeme, g.n
  FROM unnest(ARRAY[
    -- Irregular verbs.
    'arise arose arisen', 'awake awoke awoken', 'beat beaten', 'become became', 'begin began begun',
    'bend bent', 'bite bit bitten', 'bleed bled', 'blow blew blown', 'break broke broken',
    'breed bred', 'bring brought', 'build built', 'burn burnt', 'buy bought', 'catch caught',
    'choose chose chosen', 'cling clung', 'come came', 'creep crept', 'deal dealt', 'dig dug',
    'draw drew drawn', 'dream dreamt', 'drink drank drunk', 'drive drove driven', 'eat ate eaten',
    'fall fell fallen', 'feed fed', 'feel felt', 'fight fought', 'find found', 'flee fled',
    'fly flew flown', 'forbid forbade forbidden', 'forget forgot forgotten',
    'forgive forgave forgiven', 'freeze froze frozen', 'get got gotten', 'give gave given',
    'go went gone', 'grow grew grown', 'hang hung', 'hear heard', 'hide hid hidden', 'hold held',
    'keep kept', 'kneel knelt', 'know knew known', 'lay laid', 'lead led', 'leap leapt',
    'learn learnt', 'leave left', 'lend lent', 'lie lain', 'lose lost', 'make made', 'meet met',
    'pay paid', 'ride rode ridden', 'rise risen', 'run ran', 'say said', 'see saw seen',
    'seek sought', 'sell sold', 'send sent', 'shake shook shaken', 'shine shone', 'shoot shot',
    'show shown', 'shrink shrank shrunk', 'sing sang sung', 'sit sat', 'sleep slept', 'slide slid',
    'speak spoke spoken', 'spend spent', 'spin spun', 'stand stood', 'steal stole stolen',
    'sting stung', 'strike struck', 'swear swore sworn', 'sweep swept', 'swim swam swum',
    'swing swung', 'take took taken', 'teach taught', 'tell told', 'think thought',
    'throw threw thrown', 'understand understood', 'wake woke woken', 'wear wore worn', 'weep wept',
    'win won', 'write wrote written',
    -- Short forms.
    'favorite favourite fave fav', 'mother mom mum mommy mummy', 'father dad daddy',
    'child children kid kids', 'photo photograph picture pic pics', 'girlfriend gf', 'boyfriend bf',
    'husband hubby', 'dog doggo doggy pup puppy', 'cat kitty', 'birthday bday', 'vacation vacay',
    'television tv', 'grandmother grandma granny', 'grandfather grandpa', 'brother bro',
    'sister sis', 'congratulations congrats', 'information info', 'application app',
    'laboratory lab', 'mathematics maths math', 'professor prof', 'refrigerator fridge',
    'telephone phone', 'advertisement advert ad', 'university uni', 'veterinarian vet'
  ]) WITH ORDINALITY AS g(words, n),
    unnest(string_to_array(g.words, ' ')) AS w(word),
    unnest(to_tsvector('english', w.word)) AS t
)
INSERT INTO word_forms (lexeme, forms)
SELECT one.lexeme, array_agg(DISTINCT other.lexeme ORDER BY other.lexeme)
FROM grouped one JOIN grouped other ON other.n = one.n
GROUP BY one.lexeme;
