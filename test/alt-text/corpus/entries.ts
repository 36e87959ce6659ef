// The service's own corpus of raw model answers, in the styles of real vision models (llava,
// qwen2.5-vl, gemma3, llama3.2-vision, minicpm-v, GPT-4o), each with the alt text the service must
// return for it. Every entry names its language and the shapes it shows; `maxLength` (when given) is
// the request's max_length, so the expected text is also the cut. Grown with every new shape found.

export type Shape =
  /** Greetings, acknowledgements, closings: "Sure!", "I hope this helps!". */
  | 'chatter'
  /** A preamble before a colon or a presenting opener: "Here is the alt text:", "Voici", "Ecco". */
  | 'preamble'
  /** A label: "Alt text:", "**Beschreibung:**", "WCAG-compliant alt text:". */
  | 'label'
  /** A redundant opening: "The image shows", "Auf dem Bild sieht man". */
  | 'opening'
  /** Reasoning inline: <think>…</think> and its kin, though think: false was sent. */
  | 'reasoning'
  /** The answer as a JSON object when no structure was asked. */
  | 'json'
  /** YAML-ish `key: value` lines. */
  | 'yaml'
  /** A code fence around the answer. */
  | 'fence'
  /** Several labelled or numbered options: the first is the answer. */
  | 'options'
  /** The alt text in two languages: the one asked for is the answer. */
  | 'bilingual'
  /** Notes about the text itself: "(58 characters)", "WCAG-compliant". */
  | 'note'
  /** An apology or refusal before a usable description. */
  | 'apology'
  | 'emoji'
  | 'hashtags'
  /** Quotes around the whole answer. */
  | 'quotes'
  /** The same sentence twice. */
  | 'repeated'
  /** Longer than max_length: cut on a whole phrase. */
  | 'fit'
  /** Markdown emphasis, headings, bullets. */
  | 'markdown'
  /** Chat-template tokens passed on as text. */
  | 'tokens'
  /** A hard negative: a description that only looks like one of the shapes above, kept whole. */
  | 'kept'

export type CorpusEntry = { language: string; shapes: Shape[]; model: string; raw: string; expected: string; maxLength?: number }

const e = (language: string, shapes: Shape[], model: string, raw: string, expected: string, maxLength?: number): CorpusEntry =>
  maxLength === undefined ? { language, shapes, model, raw, expected } : { language, shapes, model, raw, expected, maxLength }

export const CORPUS: CorpusEntry[] = [
  // --- English -----------------------------------------------------------------------------------
  e(
    'en',
    ['chatter', 'preamble'],
    'llava',
    'Sure! Here is the alt text for the image: A golden retriever catching a frisbee in a park.',
    'A golden retriever catching a frisbee in a park.',
  ),
  e(
    'en',
    ['reasoning'],
    'qwen3-vl',
    '<think>\nThe user wants alt text. I see a cyclist on a mountain road at sunset.\n</think>\n\nA cyclist riding up a winding mountain road at sunset.',
    'A cyclist riding up a winding mountain road at sunset.',
  ),
  e(
    'en',
    ['reasoning'],
    'magistral',
    '[THINK]They want a short description. Lighthouse, rocks, waves.[/THINK]A white lighthouse on dark rocks with waves breaking below.',
    'A white lighthouse on dark rocks with waves breaking below.',
  ),
  e(
    'en',
    ['json'],
    'gpt-4o',
    '{"alt_text": "A barista pouring steamed milk into a latte with a heart pattern."}',
    'A barista pouring steamed milk into a latte with a heart pattern.',
  ),
  e(
    'en',
    ['json', 'fence'],
    'qwen2.5-vl',
    '```json\n{\n  "alt": "Two hikers resting on a rocky summit above the clouds.",\n  "language": "en"\n}\n```',
    'Two hikers resting on a rocky summit above the clouds.',
  ),
  e(
    'en',
    ['yaml'],
    'minicpm-v',
    'alt_text: A toddler splashing in a puddle wearing red rubber boots.\nlanguage: en\nlength: 60',
    'A toddler splashing in a puddle wearing red rubber boots.',
  ),
  e(
    'en',
    ['fence'],
    'llama3.2-vision',
    '```\nA vintage typewriter on a wooden desk beside a stack of letters.\n```',
    'A vintage typewriter on a wooden desk beside a stack of letters.',
  ),
  e(
    'en',
    ['options'],
    'gemma3',
    'Option 1: A black cat sleeping on a sunny windowsill.\nOption 2: A cat napping in the sun by a window.',
    'A black cat sleeping on a sunny windowsill.',
  ),
  e(
    'en',
    ['options', 'markdown'],
    'gemma3',
    '**Short:** Fresh strawberries in a white bowl.\n**Detailed:** A white ceramic bowl filled with fresh red strawberries on a linen tablecloth.',
    'Fresh strawberries in a white bowl.',
  ),
  e('en', ['options'], 'llava', '1. A lighthouse at dusk.\n2. A red and white lighthouse on a cliff at dusk.\n3. Coastal lighthouse.', 'A lighthouse at dusk.'),
  e(
    'en',
    ['note'],
    'llama3.2-vision',
    'A woman reading a book on a park bench under autumn trees. (58 characters)',
    'A woman reading a book on a park bench under autumn trees.',
  ),
  e(
    'en',
    ['note', 'label'],
    'gpt-4o',
    'WCAG-compliant alt text: A bar chart showing sales rising from 2019 to 2023.',
    'A bar chart showing sales rising from 2019 to 2023.',
  ),
  e(
    'en',
    ['note'],
    'gemma3',
    'A child blowing out candles on a birthday cake. (WCAG 2.1 compliant, 47 characters)',
    'A child blowing out candles on a birthday cake.',
  ),
  e(
    'en',
    ['apology'],
    'llava',
    "I'm sorry, but I can't identify the person in this image. However, I can describe it: a man in a grey suit speaking at a podium.",
    'A man in a grey suit speaking at a podium.',
  ),
  e(
    'en',
    ['apology'],
    'llama3.2-vision',
    'I cannot identify people based on their faces. A woman with curly hair smiling at the camera in a café.',
    'A woman with curly hair smiling at the camera in a café.',
  ),
  e(
    'en',
    ['emoji', 'hashtags'],
    'minicpm-v',
    'A sunset over a calm sea with a sailboat on the horizon 🌅⛵ #sunset #sailing #ocean',
    'A sunset over a calm sea with a sailboat on the horizon.',
  ),
  e(
    'en',
    ['quotes'],
    'llava',
    '"A steaming bowl of ramen with a soft-boiled egg and green onions."',
    'A steaming bowl of ramen with a soft-boiled egg and green onions.',
  ),
  e('en', ['repeated'], 'llava', 'A red fox standing in the snow. A red fox standing in the snow.', 'A red fox standing in the snow.'),
  e('en', ['bilingual'], 'qwen2.5-vl', 'A dog running on the beach.\n\nUn perro corriendo en la playa.', 'A dog running on the beach.'),
  e(
    'en',
    ['fit'],
    'llava',
    'A brown dog with a red collar running across a wide sandy beach toward the waves at sunset',
    'A brown dog with a red collar running across a wide sandy beach.',
    70,
  ),
  e(
    'en',
    ['fit'],
    'gpt-4o',
    'Three children in bright raincoats, holding hands and jumping into a large muddy puddle on a country lane.',
    'Three children in bright raincoats.',
    60,
  ),
  e(
    'en',
    ['fit'],
    'llama3.2-vision',
    'A young woman with long dark hair and a warm smile sitting at a wooden table in a cosy café',
    'A young woman with long dark hair and a warm smile sitting.',
    70,
  ),
  e(
    'en',
    ['chatter', 'markdown'],
    'gemma3',
    "Okay, here's an alt text:\n\n**A smiling chef holding a tray of freshly baked croissants.**\n\nLet me know if you'd like a shorter version!",
    'A smiling chef holding a tray of freshly baked croissants.',
  ),
  e(
    'en',
    ['tokens', 'opening'],
    'qwen2.5-vl',
    'The image shows a snowy mountain cabin with smoke rising from the chimney.<|im_end|>',
    'A snowy mountain cabin with smoke rising from the chimney.',
  ),

  e(
    'en',
    ['preamble', 'quotes'],
    'llava',
    "The alt text for this image would be: 'A yellow taxi on a rainy New York street.'",
    'A yellow taxi on a rainy New York street.',
  ),
  e(
    'en',
    ['preamble', 'quotes'],
    'llama3.2-vision',
    'A suitable alt text could be: "Two children flying a red kite on a windy beach."',
    'Two children flying a red kite on a windy beach.',
  ),
  e(
    'en',
    ['preamble'],
    'minicpm-v',
    'The alt text would be: A cyclist crossing a wooden bridge over a river.',
    'A cyclist crossing a wooden bridge over a river.',
  ),
  e(
    'en',
    ['preamble', 'chatter'],
    'gemma3',
    "Sure! Here's what the alt text would be: A bowl of ramen with a soft-boiled egg.",
    'A bowl of ramen with a soft-boiled egg.',
  ),
  e('en', ['markdown', 'kept'], 'llava', '- A laptop on a wooden desk\n- A cup of coffee beside it', 'A laptop on a wooden desk, a cup of coffee beside it.'),
  e(
    'en',
    ['markdown', 'kept'],
    'qwen2.5-vl',
    '- A grey cat asleep on a windowsill\n- A potted plant next to it',
    'A grey cat asleep on a windowsill, a potted plant next to it.',
  ),

  // --- German ------------------------------------------------------------------------------------
  e('de', ['preamble'], 'llava', 'Hier ist der Alt-Text: Ein Hund spielt im Schnee mit einem roten Ball.', 'Ein Hund spielt im Schnee mit einem roten Ball.'),
  e(
    'de',
    ['chatter', 'preamble'],
    'gemma3',
    'Gerne! Hier ist ein Alternativtext für das Bild:\n\nEine Frau fährt Fahrrad an einem Kanal in Amsterdam.',
    'Eine Frau fährt Fahrrad an einem Kanal in Amsterdam.',
  ),
  e('de', ['label', 'markdown'], 'gemma3', '**Bildbeschreibung:** Ein Kind baut eine Sandburg am Strand.', 'Ein Kind baut eine Sandburg am Strand.'),
  e('de', ['opening'], 'llava', 'Das Bild zeigt einen alten Leuchtturm an einer felsigen Küste.', 'Ein alter Leuchtturm an einer felsigen Küste.'),
  e(
    'de',
    ['reasoning'],
    'qwen3-vl',
    '<think>Der Nutzer möchte einen Alternativtext auf Deutsch. Ich sehe eine Katze.</think>Eine getigerte Katze schläft auf einem Sofa.',
    'Eine getigerte Katze schläft auf einem Sofa.',
  ),
  e('de', ['json'], 'gpt-4o', '{"alt_text": "Ein Bäcker holt frisches Brot aus dem Ofen."}', 'Ein Bäcker holt frisches Brot aus dem Ofen.'),
  e(
    'de',
    ['yaml'],
    'minicpm-v',
    'Alt-Text: Zwei Kinder lassen einen Drachen auf einer Wiese steigen.\nSprache: Deutsch\nZeichen: 62',
    'Zwei Kinder lassen einen Drachen auf einer Wiese steigen.',
  ),
  e(
    'de',
    ['options'],
    'gemma3',
    'Variante 1: Ein roter Traktor auf einem Weizenfeld.\nVariante 2: Ein Traktor bei der Ernte im Sommer.',
    'Ein roter Traktor auf einem Weizenfeld.',
  ),
  e('de', ['bilingual'], 'llava', 'Ein Mann angelt an einem ruhigen See. (English: A man fishing on a calm lake.)', 'Ein Mann angelt an einem ruhigen See.'),
  e(
    'de',
    ['bilingual'],
    'qwen2.5-vl',
    'DE: Ein Zug fährt über eine Steinbrücke.\nEN: A train crossing a stone bridge.',
    'Ein Zug fährt über eine Steinbrücke.',
  ),
  e('de', ['note'], 'llama3.2-vision', 'Ein Glas Orangensaft auf einem Frühstückstisch (45 Zeichen)', 'Ein Glas Orangensaft auf einem Frühstückstisch.'),
  e(
    'de',
    ['apology'],
    'llava',
    'Es tut mir leid, ich kann keine Personen identifizieren. Ein Mann in einem blauen Anzug hält eine Rede.',
    'Ein Mann in einem blauen Anzug hält eine Rede.',
  ),
  e('de', ['emoji', 'hashtags'], 'minicpm-v', 'Ein Sonnenuntergang über den Alpen 🏔️🌄 #Berge #Natur', 'Ein Sonnenuntergang über den Alpen.'),
  e('de', ['quotes'], 'llava', '„Eine Tasse Kaffee neben einem aufgeschlagenen Buch.“', 'Eine Tasse Kaffee neben einem aufgeschlagenen Buch.'),
  e('de', ['repeated'], 'llava', 'Ein Boot auf einem See. Ein Boot auf einem See.', 'Ein Boot auf einem See.'),
  e(
    'de',
    ['fit'],
    'llava',
    'Ein älterer Mann mit grauem Bart und einer karierten Mütze sitzt auf einer Parkbank und füttert Tauben',
    'Ein älterer Mann mit grauem Bart und einer karierten Mütze sitzt.',
    70,
  ),
  e(
    'de',
    ['fit'],
    'gpt-4o',
    'Eine junge Frau liest ein Buch, während draußen der Regen gegen das große Fenster prasselt.',
    'Eine junge Frau liest ein Buch.',
    50,
  ),
  e(
    'de',
    ['fence', 'chatter'],
    'qwen2.5-vl',
    'Klar!\n```\nEin Hafen mit bunten Fischerbooten bei Sonnenaufgang.\n```',
    'Ein Hafen mit bunten Fischerbooten bei Sonnenaufgang.',
  ),

  e(
    'de',
    ['preamble', 'quotes'],
    'llava',
    'Der Alt-Text für dieses Bild wäre: „Ein gelbes Taxi auf einer verregneten Straße.“',
    'Ein gelbes Taxi auf einer verregneten Straße.',
  ),
  e(
    'de',
    ['markdown', 'kept'],
    'gemma3',
    '- Ein Laptop auf einem Holztisch\n- Daneben eine Tasse Kaffee',
    'Ein Laptop auf einem Holztisch. Daneben eine Tasse Kaffee.',
  ),

  // --- French ------------------------------------------------------------------------------------
  e('fr', ['preamble'], 'llava', 'Voici le texte alternatif : Un chat noir assis sur un rebord de fenêtre.', 'Un chat noir assis sur un rebord de fenêtre.'),
  e(
    'fr',
    ['chatter', 'preamble'],
    'gemma3',
    "Bien sûr ! Voici une description de l'image :\n\nUne femme marche sous la pluie avec un parapluie rouge.",
    'Une femme marche sous la pluie avec un parapluie rouge.',
  ),
  e(
    'fr',
    ['label'],
    'llama3.2-vision',
    'Texte alternatif : Un marché de fruits et légumes sur une place ensoleillée.',
    'Un marché de fruits et légumes sur une place ensoleillée.',
  ),
  e('fr', ['opening'], 'llava', "L'image montre un pont de pierre au-dessus d'une rivière.", "Un pont de pierre au-dessus d'une rivière."),
  e(
    'fr',
    ['reasoning'],
    'qwen3-vl',
    '<think>Il faut une description courte en français.</think>\nUn cycliste monte un col de montagne.',
    'Un cycliste monte un col de montagne.',
  ),
  e('fr', ['json', 'fence'], 'qwen2.5-vl', '```json\n{"description": "Une tour Eiffel illuminée la nuit."}\n```', 'Une tour Eiffel illuminée la nuit.'),
  e('fr', ['yaml'], 'minicpm-v', 'texte_alternatif: Deux enfants jouent aux échecs dans un parc.\nlangue: fr', 'Deux enfants jouent aux échecs dans un parc.'),
  e(
    'fr',
    ['options'],
    'gemma3',
    'Option 1 : Un voilier blanc sur une mer calme.\nOption 2 : Un bateau à voile au coucher du soleil.',
    'Un voilier blanc sur une mer calme.',
  ),
  e(
    'fr',
    ['bilingual'],
    'qwen2.5-vl',
    'Français : Un boulanger sort du pain du four.\nAnglais : A baker taking bread out of the oven.',
    'Un boulanger sort du pain du four.',
  ),
  e('fr', ['note'], 'gemma3', 'Un renard roux dans un champ enneigé (36 caractères).', 'Un renard roux dans un champ enneigé.'),
  e(
    'fr',
    ['apology'],
    'llava',
    'Désolé, je ne peux pas identifier cette personne. Une femme en manteau vert attend un bus.',
    'Une femme en manteau vert attend un bus.',
  ),
  e(
    'fr',
    ['emoji', 'hashtags'],
    'minicpm-v',
    'Un croissant doré sur une assiette blanche 🥐 #petitdéjeuner #Paris',
    'Un croissant doré sur une assiette blanche.',
  ),
  e('fr', ['quotes'], 'llava', '« Un vieux phare au bord de la mer. »', 'Un vieux phare au bord de la mer.'),
  e('fr', ['repeated'], 'llava', 'Un chien dort sur un tapis. Un chien dort sur un tapis.', 'Un chien dort sur un tapis.'),
  e(
    'fr',
    ['fit'],
    'llava',
    'Un homme âgé avec une barbe blanche et un chapeau de paille qui cultive des tomates dans son jardin',
    'Un homme âgé avec une barbe blanche et un chapeau de paille.',
    70,
  ),
  e(
    'fr',
    ['fit'],
    'gpt-4o',
    'Une cuisinière prépare une tarte aux pommes, tandis que deux enfants observent la scène depuis la table.',
    'Une cuisinière prépare une tarte aux pommes.',
    60,
  ),
  e(
    'fr',
    ['chatter'],
    'gemma3',
    "Un vélo bleu appuyé contre un mur de briques. J'espère que cela vous aide !",
    'Un vélo bleu appuyé contre un mur de briques.',
  ),

  e(
    'fr',
    ['preamble', 'quotes'],
    'llava',
    'Le texte alternatif pourrait être : « Un taxi jaune dans une rue pluvieuse. »',
    'Un taxi jaune dans une rue pluvieuse.',
  ),

  // --- Spanish -----------------------------------------------------------------------------------
  e(
    'es',
    ['chatter', 'preamble'],
    'llava',
    '¡Claro! Aquí tienes el texto alternativo: Un perro corre por un campo de girasoles.',
    'Un perro corre por un campo de girasoles.',
  ),
  e('es', ['label'], 'gemma3', '**Texto alternativo:** Una mujer toca la guitarra en una plaza.', 'Una mujer toca la guitarra en una plaza.'),
  e('es', ['opening'], 'llava', 'La imagen muestra a un niño jugando al fútbol en la playa.', 'Un niño jugando al fútbol en la playa.'),
  e(
    'es',
    ['reasoning'],
    'qwen3-vl',
    '<think>Necesito describir la imagen en español.</think>Una paella con mariscos en una sartén grande.',
    'Una paella con mariscos en una sartén grande.',
  ),
  e('es', ['json'], 'gpt-4o', '{"texto_alternativo": "Un tren rojo cruza un puente sobre un río."}', 'Un tren rojo cruza un puente sobre un río.'),
  e(
    'es',
    ['yaml'],
    'minicpm-v',
    'alt_text: Dos ancianos juegan al ajedrez en un parque.\nidioma: es\ncaracteres: 48',
    'Dos ancianos juegan al ajedrez en un parque.',
  ),
  e('es', ['options'], 'gemma3', 'Opción 1: Un gato blanco duerme en una cesta.\nOpción 2: Un gato durmiendo.', 'Un gato blanco duerme en una cesta.'),
  e('es', ['bilingual'], 'llava', 'Un faro en la costa al atardecer. (In English: A lighthouse on the coast at sunset.)', 'Un faro en la costa al atardecer.'),
  e('es', ['note'], 'llama3.2-vision', 'Un plato de tacos con salsa verde (33 caracteres)', 'Un plato de tacos con salsa verde.'),
  e(
    'es',
    ['apology'],
    'llava',
    'Lo siento, no puedo identificar a las personas. Un hombre con sombrero vende frutas en un mercado.',
    'Un hombre con sombrero vende frutas en un mercado.',
  ),
  e('es', ['emoji', 'hashtags'], 'minicpm-v', 'Una puesta de sol sobre el mar 🌊☀️ #playa #verano', 'Una puesta de sol sobre el mar.'),
  e('es', ['quotes'], 'llava', '"Una bicicleta apoyada contra una pared amarilla."', 'Una bicicleta apoyada contra una pared amarilla.'),
  e('es', ['repeated'], 'llava', 'Un barco en el puerto. Un barco en el puerto.', 'Un barco en el puerto.'),
  e(
    'es',
    ['fit'],
    'llava',
    'Una mujer joven con un vestido rojo y un sombrero de paja camina por un sendero entre olivos',
    'Una mujer joven con un vestido rojo y un sombrero de paja camina.',
    70,
  ),
  e(
    'es',
    ['fit'],
    'gpt-4o',
    'Un grupo de amigos cena en una terraza, mientras el sol se pone detrás de las montañas lejanas.',
    'Un grupo de amigos cena en una terraza.',
    55,
  ),
  e('es', ['fence'], 'qwen2.5-vl', '```text\nUna catedral gótica bajo un cielo nublado.\n```', 'Una catedral gótica bajo un cielo nublado.'),

  // --- Italian -----------------------------------------------------------------------------------
  e('it', ['preamble'], 'llava', 'Ecco il testo alternativo: Una gondola nera su un canale di Venezia.', 'Una gondola nera su un canale di Venezia.'),
  e(
    'it',
    ['chatter', 'preamble'],
    'gemma3',
    "Certo! Ecco una descrizione dell'immagine:\n\nUn piatto di spaghetti al pomodoro con basilico.",
    'Un piatto di spaghetti al pomodoro con basilico.',
  ),
  e('it', ['label'], 'llama3.2-vision', 'Testo alternativo: Un ciclista percorre una strada tra i vigneti.', 'Un ciclista percorre una strada tra i vigneti.'),
  e('it', ['opening'], 'llava', "L'immagine mostra un vecchio ponte di pietra sopra un fiume.", 'Un vecchio ponte di pietra sopra un fiume.'),
  e(
    'it',
    ['reasoning'],
    'qwen3-vl',
    '<think>Devo scrivere in italiano.</think>\n\nUna donna legge un libro su una panchina.',
    'Una donna legge un libro su una panchina.',
  ),
  e('it', ['json'], 'gpt-4o', '{"alt_text": "Un gatto arancione dorme al sole."}', 'Un gatto arancione dorme al sole.'),
  e(
    'it',
    ['yaml'],
    'minicpm-v',
    'testo_alternativo: Due bambini costruiscono un castello di sabbia.\nlingua: it',
    'Due bambini costruiscono un castello di sabbia.',
  ),
  e('it', ['options'], 'gemma3', '1. Un faro bianco su una scogliera.\n2. Un faro al tramonto.', 'Un faro bianco su una scogliera.'),
  e('it', ['bilingual'], 'qwen2.5-vl', 'Italiano: Un treno attraversa le Alpi.\nInglese: A train crossing the Alps.', 'Un treno attraversa le Alpi.'),
  e('it', ['note'], 'gemma3', 'Una tazza di cappuccino con la schiuma a cuore (45 caratteri)', 'Una tazza di cappuccino con la schiuma a cuore.'),
  e(
    'it',
    ['apology'],
    'llava',
    'Mi dispiace, non posso identificare le persone. Un uomo in bicicletta attraversa una piazza.',
    'Un uomo in bicicletta attraversa una piazza.',
  ),
  e('it', ['emoji', 'hashtags'], 'minicpm-v', 'Il Colosseo al tramonto 🏛️ #Roma #viaggio', 'Il Colosseo al tramonto.'),
  e('it', ['quotes'], 'llava', '«Una barca a vela nel porto.»', 'Una barca a vela nel porto.'),
  e('it', ['repeated'], 'llava', 'Un cane corre sulla spiaggia. Un cane corre sulla spiaggia.', 'Un cane corre sulla spiaggia.'),
  e(
    'it',
    ['fit'],
    'llava',
    'Una donna anziana con un cappello di paglia e un cesto di limoni cammina lungo una strada di campagna',
    'Una donna anziana con un cappello di paglia e un cesto.',
    70,
  ),
  e(
    'it',
    ['fit'],
    'gpt-4o',
    'Un cuoco prepara la pizza nel forno a legna, mentre i clienti aspettano seduti ai tavoli.',
    'Un cuoco prepara la pizza nel forno a legna.',
    55,
  ),

  // --- Portuguese --------------------------------------------------------------------------------
  e(
    'pt',
    ['chatter', 'preamble'],
    'llava',
    'Claro! Aqui está o texto alternativo: Um cachorro brincando na areia da praia.',
    'Um cachorro brincando na areia da praia.',
  ),
  e('pt', ['label'], 'gemma3', '**Texto alternativo:** Uma mulher vendendo frutas em uma feira.', 'Uma mulher vendendo frutas em uma feira.'),
  e('pt', ['opening'], 'llava', 'A imagem mostra um bonde amarelo subindo uma rua de Lisboa.', 'Um bonde amarelo subindo uma rua de Lisboa.'),
  e('pt', ['reasoning'], 'qwen3-vl', '<think>Descrever em português.</think>Um pôr do sol sobre o rio com barcos.', 'Um pôr do sol sobre o rio com barcos.'),
  e('pt', ['json'], 'gpt-4o', '{"alt_text": "Duas crianças jogando futebol na rua."}', 'Duas crianças jogando futebol na rua.'),
  e('pt', ['yaml'], 'minicpm-v', 'texto_alternativo: Um prato de feijoada com arroz e couve.\nidioma: pt', 'Um prato de feijoada com arroz e couve.'),
  e('pt', ['options'], 'gemma3', 'Opção 1: Um gato preto dormindo no sofá.\nOpção 2: Um gato descansando.', 'Um gato preto dormindo no sofá.'),
  e('pt', ['bilingual'], 'llava', 'Um farol na costa rochosa. (English: A lighthouse on the rocky coast.)', 'Um farol na costa rochosa.'),
  e('pt', ['note'], 'llama3.2-vision', 'Uma xícara de café sobre a mesa (32 caracteres)', 'Uma xícara de café sobre a mesa.'),
  e('pt', ['apology'], 'llava', 'Desculpe, não posso identificar pessoas. Um homem tocando violão em uma praça.', 'Um homem tocando violão em uma praça.'),
  e('pt', ['emoji', 'hashtags'], 'minicpm-v', 'O Cristo Redentor ao amanhecer 🌄 #RioDeJaneiro #viagem', 'O Cristo Redentor ao amanhecer.'),
  e('pt', ['quotes'], 'llava', '"Uma bicicleta vermelha encostada em um muro."', 'Uma bicicleta vermelha encostada em um muro.'),
  e('pt', ['repeated'], 'llava', 'Um barco no lago. Um barco no lago.', 'Um barco no lago.'),
  e(
    'pt',
    ['fit'],
    'llava',
    'Uma menina com um vestido azul e um laço no cabelo segura um balão vermelho no parque',
    'Uma menina com um vestido azul e um laço.',
    65,
  ),
  e(
    'pt',
    ['fit'],
    'gpt-4o',
    'Um pescador conserta suas redes no cais, enquanto gaivotas voam sobre os barcos coloridos.',
    'Um pescador conserta suas redes no cais.',
    55,
  ),

  // --- Dutch -------------------------------------------------------------------------------------
  e('nl', ['preamble'], 'llava', 'Hier is de alt-tekst: Een molen naast een kanaal met tulpen.', 'Een molen naast een kanaal met tulpen.'),
  e(
    'nl',
    ['chatter', 'preamble'],
    'gemma3',
    'Natuurlijk! Hier is een beschrijving van de afbeelding:\n\nEen fietser rijdt over een brug in Utrecht.',
    'Een fietser rijdt over een brug in Utrecht.',
  ),
  e('nl', ['label'], 'llama3.2-vision', 'Alt-tekst: Een kat ligt te slapen in een mand.', 'Een kat ligt te slapen in een mand.'),
  e('nl', ['opening'], 'llava', 'De afbeelding toont een zeilboot op een rustig meer.', 'Een zeilboot op een rustig meer.'),
  e(
    'nl',
    ['reasoning'],
    'qwen3-vl',
    '<think>Nederlands graag.</think>Twee kinderen schaatsen op een bevroren vaart.',
    'Twee kinderen schaatsen op een bevroren vaart.',
  ),
  e(
    'nl',
    ['json', 'fence'],
    'qwen2.5-vl',
    '```json\n{"alt_text": "Een kaasmarkt met gele kazen op het plein."}\n```',
    'Een kaasmarkt met gele kazen op het plein.',
  ),
  e('nl', ['options'], 'gemma3', 'Optie 1: Een vuurtoren op een duin.\nOptie 2: Een vuurtoren bij zonsondergang.', 'Een vuurtoren op een duin.'),
  e('nl', ['bilingual'], 'qwen2.5-vl', 'NL: Een hond speelt in het gras.\nEN: A dog playing in the grass.', 'Een hond speelt in het gras.'),
  e('nl', ['note'], 'gemma3', 'Een kop thee op een houten tafel (32 tekens)', 'Een kop thee op een houten tafel.'),
  e(
    'nl',
    ['apology'],
    'llava',
    'Het spijt me, ik kan geen personen herkennen. Een man in een oranje jas wacht op de tram.',
    'Een man in een oranje jas wacht op de tram.',
  ),
  e('nl', ['emoji', 'hashtags'], 'minicpm-v', 'Een veld vol tulpen in de lente 🌷 #Holland #lente', 'Een veld vol tulpen in de lente.'),
  e('nl', ['repeated', 'quotes'], 'llava', '"Een trein bij het station. Een trein bij het station."', 'Een trein bij het station.'),
  e(
    'nl',
    ['fit'],
    'llava',
    'Een oudere vrouw met een rode sjaal en een boodschappentas fietst langs een gracht in de regen',
    'Een oudere vrouw met een rode sjaal en een boodschappentas fietst.',
    70,
  ),
  e(
    'nl',
    ['fit'],
    'gpt-4o',
    'Een bakker haalt vers brood uit de oven, terwijl klanten in de winkel op hun beurt wachten.',
    'Een bakker haalt vers brood uit de oven.',
    55,
  ),

  // --- Polish ------------------------------------------------------------------------------------
  e('pl', ['preamble'], 'llava', 'Oto tekst alternatywny: Pies biegnie po plaży o zachodzie słońca.', 'Pies biegnie po plaży o zachodzie słońca.'),
  e('pl', ['chatter', 'preamble'], 'gemma3', 'Oczywiście! Oto opis obrazu:\n\nKobieta czyta książkę w parku.', 'Kobieta czyta książkę w parku.'),
  e('pl', ['label'], 'llama3.2-vision', 'Tekst alternatywny: Zamek na wzgórzu nad rzeką.', 'Zamek na wzgórzu nad rzeką.'),
  e('pl', ['reasoning'], 'qwen3-vl', '<think>Po polsku.</think>Czerwony tramwaj na ulicy Krakowa.', 'Czerwony tramwaj na ulicy Krakowa.'),
  e('pl', ['json'], 'gpt-4o', '{"alt_text": "Dwoje dzieci lepi bałwana w ogrodzie."}', 'Dwoje dzieci lepi bałwana w ogrodzie.'),
  e('pl', ['yaml'], 'minicpm-v', 'alt_text: Kot śpi na parapecie w słońcu.\njęzyk: pl', 'Kot śpi na parapecie w słońcu.'),
  e('pl', ['options'], 'gemma3', 'Opcja 1: Latarnia morska na klifie.\nOpcja 2: Latarnia o zmierzchu.', 'Latarnia morska na klifie.'),
  e('pl', ['bilingual'], 'llava', 'Rowerzysta na górskiej drodze. (English: A cyclist on a mountain road.)', 'Rowerzysta na górskiej drodze.'),
  e('pl', ['note'], 'gemma3', 'Filiżanka kawy na drewnianym stole (34 znaki)', 'Filiżanka kawy na drewnianym stole.'),
  e(
    'pl',
    ['apology'],
    'llava',
    'Przepraszam, nie mogę identyfikować osób. Mężczyzna w garniturze przemawia na scenie.',
    'Mężczyzna w garniturze przemawia na scenie.',
  ),
  e('pl', ['emoji', 'hashtags'], 'minicpm-v', 'Góry Tatry o wschodzie słońca 🏔️ #Tatry #góry', 'Góry Tatry o wschodzie słońca.'),
  e('pl', ['quotes', 'repeated'], 'llava', '"Łódka na jeziorze. Łódka na jeziorze."', 'Łódka na jeziorze.'),
  e('pl', ['fit'], 'llava', 'Starszy mężczyzna z siwą brodą i w kraciastej czapce karmi gołębie na rynku w Krakowie', 'Starszy mężczyzna z siwą brodą.', 65),
  e('pl', ['fit'], 'gpt-4o', 'Kobieta piecze chleb w kuchni, podczas gdy dzieci bawią się przy stole.', 'Kobieta piecze chleb w kuchni.', 45),

  // --- Swedish -----------------------------------------------------------------------------------
  e('sv', ['preamble'], 'llava', 'Här är alt-texten: En röd stuga vid en sjö.', 'En röd stuga vid en sjö.'),
  e(
    'sv',
    ['chatter', 'preamble'],
    'gemma3',
    'Självklart! Här är en beskrivning av bilden:\n\nEn älg står i en skog i dimma.',
    'En älg står i en skog i dimma.',
  ),
  e('sv', ['label'], 'llama3.2-vision', 'Alternativ text: Två barn bygger en snögubbe.', 'Två barn bygger en snögubbe.'),
  e('sv', ['opening'], 'llava', 'Bilden visar en segelbåt i skärgården.', 'En segelbåt i skärgården.'),
  e(
    'sv',
    ['reasoning'],
    'qwen3-vl',
    '<think>På svenska.</think>En kanelbulle på ett fat bredvid en kopp kaffe.',
    'En kanelbulle på ett fat bredvid en kopp kaffe.',
  ),
  e('sv', ['json'], 'gpt-4o', '{"alt_text": "En cyklist på en grusväg genom ett vetefält."}', 'En cyklist på en grusväg genom ett vetefält.'),
  e('sv', ['options'], 'gemma3', 'Alternativ 1: En fyr på en klippa.\nAlternativ 2: En fyr i solnedgången.', 'En fyr på en klippa.'),
  e('sv', ['bilingual'], 'qwen2.5-vl', 'SV: En katt sover i ett fönster.\nEN: A cat sleeping in a window.', 'En katt sover i ett fönster.'),
  e('sv', ['note'], 'gemma3', 'En tunnelbanestation i Stockholm (32 tecken)', 'En tunnelbanestation i Stockholm.'),
  e(
    'sv',
    ['apology'],
    'llava',
    'Tyvärr kan jag inte identifiera personer. En kvinna i gul regnjacka går längs en kaj.',
    'En kvinna i gul regnjacka går längs en kaj.',
  ),
  e('sv', ['emoji', 'hashtags'], 'minicpm-v', 'Norrsken över en frusen sjö ✨ #norrsken #Sverige', 'Norrsken över en frusen sjö.'),
  e('sv', ['repeated'], 'llava', 'En hund på en brygga. En hund på en brygga.', 'En hund på en brygga.'),
  e(
    'sv',
    ['fit'],
    'llava',
    'En äldre man med grått skägg och en stickad mössa fiskar från en brygga i morgondimman',
    'En äldre man med grått skägg och en stickad mössa fiskar.',
    60,
  ),
  e('sv', ['quotes'], 'llava', '”Ett rött hus vid havet.”', 'Ett rött hus vid havet.'),

  // --- Japanese ----------------------------------------------------------------------------------
  e('ja', ['chatter', 'preamble'], 'gemma3', 'はい、以下が代替テキストです：\n\n桜並木の下を歩く着物姿の女性。', '桜並木の下を歩く着物姿の女性。'),
  e('ja', ['label'], 'llama3.2-vision', '代替テキスト：雪に覆われた富士山と湖。', '雪に覆われた富士山と湖。'),
  e('ja', ['reasoning'], 'qwen3-vl', '<think>日本語で説明します。</think>ラーメンの入った丼と箸。', 'ラーメンの入った丼と箸。'),
  e('ja', ['json'], 'gpt-4o', '{"alt_text": "駅のホームに停車している新幹線。"}', '駅のホームに停車している新幹線。'),
  e('ja', ['options'], 'gemma3', '案1：公園で遊ぶ二人の子供。\n案2：ブランコに乗る子供たち。', '公園で遊ぶ二人の子供。'),
  e('ja', ['bilingual'], 'qwen2.5-vl', '日本語：川沿いの古い木造の家。\n英語：An old wooden house by the river.', '川沿いの古い木造の家。'),
  e('ja', ['note'], 'gemma3', '赤い鳥居が並ぶ神社の参道。（14文字）', '赤い鳥居が並ぶ神社の参道。'),
  e('ja', ['apology'], 'llava', '申し訳ありませんが、人物を特定することはできません。スーツを着た男性が演説している。', 'スーツを着た男性が演説している。'),
  e('ja', ['emoji', 'hashtags'], 'minicpm-v', '夕焼けの海と砂浜🌅 #夕日 #海', '夕焼けの海と砂浜。'),
  e('ja', ['quotes'], 'llava', '「机の上に置かれた湯気の立つ緑茶。」', '机の上に置かれた湯気の立つ緑茶。'),
  e('ja', ['repeated'], 'llava', '猫が窓辺で眠っている。猫が窓辺で眠っている。', '猫が窓辺で眠っている。'),
  e('ja', ['fit'], 'gpt-4o', '古い町家が並ぶ京都の石畳の通り。赤い傘をさした着物姿の女性が雨の中を歩いている。', '古い町家が並ぶ京都の石畳の通り。', 30),
  e('ja', ['chatter'], 'gemma3', '紅葉に囲まれた古いお寺。お役に立てれば幸いです。', '紅葉に囲まれた古いお寺。'),

  // --- Chinese -----------------------------------------------------------------------------------
  e('zh', ['chatter', 'preamble'], 'qwen2.5-vl', '好的，以下是替代文本：一只熊猫坐在竹林里吃竹子。', '一只熊猫坐在竹林里吃竹子。'),
  e('zh', ['label'], 'llama3.2-vision', '替代文本：长城在秋天的山脊上蜿蜒。', '长城在秋天的山脊上蜿蜒。'),
  e('zh', ['opening'], 'qwen2.5-vl', '这张图片显示了一碗热气腾腾的牛肉面。', '一碗热气腾腾的牛肉面。'),
  e('zh', ['reasoning'], 'qwen3-vl', '<think>用户需要中文的替代文本。</think>\n一位老人在公园里打太极拳。', '一位老人在公园里打太极拳。'),
  e('zh', ['json'], 'gpt-4o', '{"alt_text": "夜晚灯火通明的上海外滩。"}', '夜晚灯火通明的上海外滩。'),
  e('zh', ['yaml'], 'minicpm-v', 'alt_text: 两个孩子在海边放风筝。\nlanguage: zh', '两个孩子在海边放风筝。'),
  e('zh', ['options'], 'qwen2.5-vl', '选项1：一只橘猫在窗台上睡觉。\n选项2：阳光下的猫。', '一只橘猫在窗台上睡觉。'),
  e('zh', ['bilingual'], 'qwen2.5-vl', '中文：一列高铁穿过稻田。\n英文：A high-speed train crossing rice fields.', '一列高铁穿过稻田。'),
  e('zh', ['note'], 'gemma3', '一杯绿茶放在木桌上。（10个字）', '一杯绿茶放在木桌上。'),
  e('zh', ['apology'], 'llava', '抱歉，我无法识别图中的人物。一名穿西装的男子在讲台上发言。', '一名穿西装的男子在讲台上发言。'),
  e('zh', ['emoji', 'hashtags'], 'minicpm-v', '雪后的故宫🏯 #北京 #冬天', '雪后的故宫。'),
  e('zh', ['quotes'], 'llava', '“一艘小船停在湖边。”', '一艘小船停在湖边。'),
  e('zh', ['repeated'], 'llava', '一只狗在草地上奔跑。一只狗在草地上奔跑。', '一只狗在草地上奔跑。'),
  e(
    'zh',
    ['fit'],
    'qwen2.5-vl',
    '一位穿红色外套的女孩，站在雪地里的小木屋前，手里拿着一个刚堆好的雪人的胡萝卜鼻子。',
    '一位穿红色外套的女孩，站在雪地里的小木屋前。',
    25,
  ),
  e('zh', ['chatter'], 'qwen2.5-vl', '一座古老的石桥横跨小河。希望这对您有帮助！', '一座古老的石桥横跨小河。'),

  // --- Russian and Turkish (phrases known, not among the ten above) -------------------------------
  e('ru', ['preamble'], 'llava', 'Вот альтернативный текст: Собака бежит по снегу.', 'Собака бежит по снегу.'),
  e('ru', ['bilingual'], 'qwen2.5-vl', 'RU: Кошка спит на подоконнике.\nEN: A cat sleeping on a windowsill.', 'Кошка спит на подоконнике.'),
  e('tr', ['chatter', 'preamble'], 'gemma3', 'Tabii! İşte alternatif metin: Boğaz üzerinde bir vapur.', 'Boğaz üzerinde bir vapur.'),
  e('tr', ['json'], 'gpt-4o', '{"alt_text": "Bir çay bardağı ve simit."}', 'Bir çay bardağı ve simit.'),

  // --- Found by probing after the first round -----------------------------------------------------
  e('de', ['bilingual'], 'llava', 'Ein Hund am Strand. / A dog on the beach.', 'Ein Hund am Strand.'),
  e(
    'en',
    ['chatter', 'markdown'],
    'llama3.2-vision',
    'Sure, here you go:\n\n> A dog shaking off water on a pebble beach.',
    'A dog shaking off water on a pebble beach.',
  ),
  e(
    'fr',
    ['preamble', 'options'],
    'gemma3',
    'Voici :\n- Court : Un chien sur la plage.\n- Long : Un chien brun court sur une plage de sable.',
    'Un chien sur la plage.',
  ),
  e('it', ['preamble'], 'llava', 'Ecco a te: un cane sulla spiaggia.', 'Un cane sulla spiaggia.'),
  e(
    'en',
    ['fence', 'label'],
    'qwen2.5-vl',
    '```html\n<img src="beach.jpg" alt="A dog on a pebble beach at low tide">\n```',
    'A dog on a pebble beach at low tide.',
  ),
  e('en', ['label'], 'minicpm-v', 'alt="Two swans gliding on a misty lake"', 'Two swans gliding on a misty lake.'),
  e(
    'es',
    ['options', 'label'],
    'gemma3',
    'Descripción breve: Un perro en la playa.\nDescripción detallada: Un perro marrón corre por la playa al atardecer.',
    'Un perro en la playa.',
  ),
  e(
    'en',
    ['bilingual', 'label'],
    'qwen2.5-vl',
    'Alt text (English): A red tram on a hill.\nAlt text (Spanish): Un tranvía rojo en una colina.',
    'A red tram on a hill.',
  ),

  e(
    'es',
    ['bilingual', 'label'],
    'qwen2.5-vl',
    'Alt text (English): A red tram on a hill.\nAlt text (Spanish): Un tranvía rojo en una colina.',
    'Un tranvía rojo en una colina.',
  ),
  e(
    'de',
    ['preamble', 'quotes', 'note'],
    'gemma3',
    'Hier ist ein möglicher Alt-Text:\n\n"Ein Dackel schläft in einem Korb."\n\nDieser Text ist WCAG-konform und hat 33 Zeichen.',
    'Ein Dackel schläft in einem Korb.',
  ),
  e('de', ['note', 'label'], 'gpt-4o', 'WCAG-konformer Alt-Text: Ein Segelboot im Hafen von Kiel.', 'Ein Segelboot im Hafen von Kiel.'),
  e(
    'fr',
    ['note', 'label'],
    'gpt-4o',
    'Texte alternatif conforme WCAG : Un marché de Noël sur une place enneigée.',
    'Un marché de Noël sur une place enneigée.',
  ),
  e('ja', ['preamble', 'chatter'], 'gemma3', 'こちらが代替テキストです：浜辺を走る犬。ご参考になれば幸いです。', '浜辺を走る犬。'),
  // --- Hard negatives: descriptions that only look like a shape; they must come back whole ---------
  e('en', ['kept', 'hashtags'], 'gpt-4o', 'A protest sign reading #LoveWins held above a crowd', 'A protest sign reading #LoveWins held above a crowd.'),
  e('en', ['kept', 'yaml'], 'llava', 'A shop window with a sign: Sale 50% off everything', 'A shop window with a sign: Sale 50% off everything.'),
  e('en', ['kept', 'repeated'], 'llava', 'Two identical red doors side by side on a white wall.', 'Two identical red doors side by side on a white wall.'),
  e('de', ['kept', 'options'], 'llava', '1. FC Köln Fans feiern im Stadion', '1. FC Köln Fans feiern im Stadion.'),
  e('fr', ['kept', 'bilingual'], 'gemma3', 'Une pancarte « Welcome to Paris » devant une gare', 'Une pancarte « Welcome to Paris » devant une gare.'),
  e(
    'es',
    ['kept', 'json'],
    'qwen2.5-vl',
    'Una pantalla de ordenador con código {"id": 1} en un editor',
    'Una pantalla de ordenador con código {"id": 1} en un editor.',
  ),
  e(
    'en',
    ['kept', 'note'],
    'llava',
    'A presenter at a podium. The slide behind her reads WCAG conformance levels',
    'A presenter at a podium. The slide behind her reads WCAG conformance levels.',
  ),
]
