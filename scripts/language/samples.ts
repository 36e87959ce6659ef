// A small labelled set of alt-text-sized sentences (5 to 20 words, at most 125 characters) in each
// language the prompts name, for comparing language identifiers (compare.ts) and for the detector's
// unit test. Written as models write alt text: a subject, what happens, a setting, a transcribed sign.
export const LANGUAGE_SAMPLES: Record<string, string[]> = {
  en: [
    'A golden retriever catches a red frisbee in a sunny park.',
    'Two children build a sandcastle on a crowded beach at sunset.',
    'Bar chart showing sales rising steadily from January to June.',
    'A woman in a blue coat waits at a bus stop in the rain.',
    'Close-up of fresh strawberries in a white bowl on a wooden table.',
    'Fishing boats moored in a small harbour under a cloudy sky.',
  ],
  de: [
    'Ein Golden Retriever fängt eine rote Frisbeescheibe in einem sonnigen Park.',
    'Zwei Kinder bauen bei Sonnenuntergang eine Sandburg an einem vollen Strand.',
    'Balkendiagramm: Der Umsatz steigt von Januar bis Juni stetig an.',
    'Eine Frau im blauen Mantel wartet im Regen an einer Bushaltestelle.',
    'Frische Erdbeeren in einer weißen Schüssel auf einem Holztisch.',
    'Fischerboote liegen in einem kleinen Hafen unter bewölktem Himmel.',
  ],
  fr: [
    'Un golden retriever attrape un frisbee rouge dans un parc ensoleillé.',
    'Deux enfants construisent un château de sable sur une plage bondée au coucher du soleil.',
    'Diagramme en barres montrant des ventes en hausse de janvier à juin.',
    'Une femme en manteau bleu attend sous la pluie à un arrêt de bus.',
    'Des fraises fraîches dans un bol blanc posé sur une table en bois.',
    'Des bateaux de pêche amarrés dans un petit port sous un ciel nuageux.',
  ],
  es: [
    'Un golden retriever atrapa un frisbee rojo en un parque soleado.',
    'Dos niños construyen un castillo de arena en una playa llena de gente al atardecer.',
    'Gráfico de barras que muestra ventas en aumento de enero a junio.',
    'Una mujer con abrigo azul espera bajo la lluvia en una parada de autobús.',
    'Fresas frescas en un cuenco blanco sobre una mesa de madera.',
    'Barcos de pesca amarrados en un pequeño puerto bajo un cielo nublado.',
  ],
  it: [
    'Un golden retriever afferra un frisbee rosso in un parco soleggiato.',
    'Due bambini costruiscono un castello di sabbia su una spiaggia affollata al tramonto.',
    'Grafico a barre che mostra vendite in costante crescita da gennaio a giugno.',
    "Una donna con un cappotto blu aspetta l'autobus sotto la pioggia.",
    'Fragole fresche in una ciotola bianca su un tavolo di legno.',
    'Barche da pesca ormeggiate in un piccolo porto sotto un cielo nuvoloso.',
  ],
  pt: [
    'Um golden retriever apanha um frisbee vermelho num parque ensolarado.',
    'Duas crianças constroem um castelo de areia numa praia cheia ao pôr do sol.',
    'Gráfico de barras mostrando vendas que sobem de janeiro a junho.',
    'Uma mulher de casaco azul espera na chuva num ponto de ônibus.',
    'Morangos frescos numa tigela branca sobre uma mesa de madeira.',
    'Barcos de pesca atracados num pequeno porto sob um céu nublado.',
  ],
  nl: [
    'Een golden retriever vangt een rode frisbee in een zonnig park.',
    'Twee kinderen bouwen bij zonsondergang een zandkasteel op een druk strand.',
    'Staafdiagram waarin de verkoop van januari tot juni gestaag stijgt.',
    'Een vrouw in een blauwe jas wacht in de regen bij een bushalte.',
    'Verse aardbeien in een witte kom op een houten tafel.',
    'Vissersboten liggen aangemeerd in een kleine haven onder een bewolkte lucht.',
  ],
  sv: [
    'En golden retriever fångar en röd frisbee i en solig park.',
    'Två barn bygger ett sandslott på en full strand i solnedgången.',
    'Stapeldiagram som visar att försäljningen ökar stadigt från januari till juni.',
    'En kvinna i blå kappa väntar i regnet vid en busshållplats.',
    'Färska jordgubbar i en vit skål på ett träbord.',
    'Fiskebåtar förtöjda i en liten hamn under en molnig himmel.',
  ],
  da: [
    'En golden retriever griber en rød frisbee i en solrig park.',
    'To børn bygger et sandslot på en fyldt strand ved solnedgang.',
    'Søjlediagram, der viser et støt stigende salg fra januar til juni.',
    'En kvinde i blå frakke venter i regnvejr ved et busstoppested.',
    'Friske jordbær i en hvid skål på et træbord.',
    'Fiskerbåde fortøjet i en lille havn under en overskyet himmel.',
  ],
  nb: [
    'En golden retriever fanger en rød frisbee i en solfylt park.',
    'To barn bygger et sandslott på en full strand i solnedgangen.',
    'Søylediagram som viser at salget øker jevnt fra januar til juni.',
    'En kvinne i blå kåpe venter i regnet ved en bussholdeplass.',
    'Ferske jordbær i en hvit bolle på et trebord.',
    'Fiskebåter fortøyd i en liten havn under en overskyet himmel.',
  ],
  fi: [
    'Kultainennoutaja nappaa punaisen frisbeen aurinkoisessa puistossa.',
    'Kaksi lasta rakentaa hiekkalinnaa täydellä rannalla auringonlaskun aikaan.',
    'Pylväskaavio, jossa myynti kasvaa tasaisesti tammikuusta kesäkuuhun.',
    'Sinitakkinen nainen odottaa sateessa bussipysäkillä.',
    'Tuoreita mansikoita valkoisessa kulhossa puupöydällä.',
    'Kalastusveneitä kiinnitettynä pieneen satamaan pilvisen taivaan alla.',
  ],
  pl: [
    'Golden retriever łapie czerwone frisbee w słonecznym parku.',
    'Dwoje dzieci buduje zamek z piasku na zatłoczonej plaży o zachodzie słońca.',
    'Wykres słupkowy pokazujący stały wzrost sprzedaży od stycznia do czerwca.',
    'Kobieta w niebieskim płaszczu czeka w deszczu na przystanku autobusowym.',
    'Świeże truskawki w białej misce na drewnianym stole.',
    'Łodzie rybackie zacumowane w małym porcie pod pochmurnym niebem.',
  ],
  cs: [
    'Zlatý retrívr chytá červené frisbee ve slunném parku.',
    'Dvě děti staví hrad z písku na přeplněné pláži při západu slunce.',
    'Sloupcový graf ukazující stálý růst prodeje od ledna do června.',
    'Žena v modrém kabátě čeká v dešti na autobusové zastávce.',
    'Čerstvé jahody v bílé misce na dřevěném stole.',
    'Rybářské lodě kotví v malém přístavu pod zataženou oblohou.',
  ],
  tr: [
    'Bir golden retriever güneşli bir parkta kırmızı bir frizbi yakalıyor.',
    'İki çocuk gün batımında kalabalık bir plajda kumdan kale yapıyor.',
    'Ocaktan hazirana kadar satışların düzenli olarak arttığını gösteren çubuk grafik.',
    'Mavi paltolu bir kadın yağmurda otobüs durağında bekliyor.',
    'Ahşap bir masada beyaz bir kasede taze çilekler.',
    'Bulutlu bir gökyüzü altında küçük bir limana bağlı balıkçı tekneleri.',
  ],
  ru: [
    'Золотистый ретривер ловит красную летающую тарелку в солнечном парке.',
    'Двое детей строят замок из песка на многолюдном пляже на закате.',
    'Столбчатая диаграмма: продажи стабильно растут с января по июнь.',
    'Женщина в синем пальто ждёт под дождём на автобусной остановке.',
    'Свежая клубника в белой миске на деревянном столе.',
    'Рыбацкие лодки стоят в маленькой гавани под облачным небом.',
  ],
  uk: [
    'Золотистий ретривер ловить червону літаючу тарілку в сонячному парку.',
    'Двоє дітей будують замок із піску на людному пляжі під час заходу сонця.',
    'Стовпчикова діаграма: продажі стабільно зростають із січня по червень.',
    'Жінка в синьому пальті чекає під дощем на автобусній зупинці.',
    'Свіжа полуниця в білій мисці на дерев’яному столі.',
    'Рибальські човни стоять у маленькій гавані під хмарним небом.',
  ],
  ar: [
    'كلب جولدن ريتريفر يلتقط طبقًا طائرًا أحمر في حديقة مشمسة.',
    'طفلان يبنيان قلعة رملية على شاطئ مزدحم عند غروب الشمس.',
    'مخطط شريطي يوضح ارتفاع المبيعات بثبات من يناير إلى يونيو.',
    'امرأة بمعطف أزرق تنتظر تحت المطر في موقف الحافلات.',
    'فراولة طازجة في وعاء أبيض على طاولة خشبية.',
    'قوارب صيد راسية في ميناء صغير تحت سماء غائمة.',
  ],
  hi: [
    'एक गोल्डन रिट्रीवर धूप वाले पार्क में लाल फ्रिसबी पकड़ता है।',
    'दो बच्चे सूर्यास्त के समय भीड़ भरे समुद्र तट पर रेत का महल बना रहे हैं।',
    'बार चार्ट जिसमें जनवरी से जून तक बिक्री लगातार बढ़ती दिखती है।',
    'नीले कोट में एक महिला बारिश में बस स्टॉप पर इंतज़ार कर रही है।',
    'लकड़ी की मेज़ पर सफ़ेद कटोरे में ताज़ी स्ट्रॉबेरी।',
    'बादलों भरे आसमान के नीचे एक छोटे बंदरगाह में बंधी मछली पकड़ने वाली नावें।',
  ],
  ja: [
    '晴れた公園で赤いフリスビーをキャッチするゴールデンレトリバー。',
    '夕暮れの混雑した浜辺で砂の城を作る二人の子ども。',
    '1月から6月まで売上が着実に伸びていることを示す棒グラフ。',
    '雨の中、バス停で待つ青いコートの女性。',
    '木のテーブルの上の白いボウルに入った新鮮なイチゴ。',
    '曇り空の下、小さな港に係留された漁船。',
  ],
  zh: [
    '一只金毛寻回犬在阳光明媚的公园里接住红色飞盘。',
    '两个孩子在日落时分拥挤的海滩上堆沙堡。',
    '柱状图显示从一月到六月销售额稳步增长。',
    '一位穿蓝色外套的女子在雨中的公交车站等车。',
    '木桌上白色碗里的新鲜草莓。',
    '多云的天空下，小港口里停泊着渔船。',
  ],
  ko: [
    '골든 리트리버가 햇살 좋은 공원에서 빨간 원반을 잡고 있다.',
    '두 아이가 해 질 녘 붐비는 해변에서 모래성을 쌓고 있다.',
    '1월부터 6월까지 매출이 꾸준히 증가하는 막대그래프.',
    '파란 코트를 입은 여성이 비 오는 버스 정류장에서 기다리고 있다.',
    '나무 탁자 위 하얀 그릇에 담긴 신선한 딸기.',
    '흐린 하늘 아래 작은 항구에 정박한 어선들.',
  ],
}

/**
 * Alt texts in the language asked for that quote text in another (a sign, a brand): a detector must
 * not call these wrong. `[language, text]`.
 */
export const QUOTING_SAMPLES: [string, string][] = [
  ['de', 'Ein Schild an der Ladentür mit der Aufschrift "OPEN 24 HOURS".'],
  ['fr', 'Une affiche de concert annonçant "The Rolling Stones Live in London".'],
  ['es', 'Un cartel en la pared que dice "Welcome to the Jungle".'],
  ['ja', '「SALE 50% OFF」と書かれた店頭の看板。'],
]

/** The text cut to at most `chars` characters at a word boundary (where there is none, at any character). */
export function cut(text: string, chars: number): string {
  const characters = Array.from(text)
  if (characters.length <= chars) return text
  const prefix = characters.slice(0, chars).join('')
  const space = prefix.lastIndexOf(' ')
  return space > 0 ? prefix.slice(0, space) : prefix
}
